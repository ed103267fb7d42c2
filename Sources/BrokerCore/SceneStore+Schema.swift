import GRDB

extension SceneStore {
    /// The schema of `scenes.sqlite`, as GRDB migrations. A migration, once shipped, is never
    /// edited: a change is a new migration appended here.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE sceneSession (
                    persistentIdentifier TEXT PRIMARY KEY NOT NULL,
                    appID TEXT NOT NULL,
                    role TEXT NOT NULL,
                    configurationName TEXT,
                    title TEXT,
                    frameX REAL,
                    frameY REAL,
                    frameWidth REAL,
                    frameHeight REAL,
                    screen INTEGER NOT NULL,
                    stackOrder INTEGER NOT NULL,
                    userInfo BLOB,
                    stateRestorationActivity BLOB,
                    canActivateFor TEXT NOT NULL,
                    prefersToActivateFor TEXT NOT NULL,
                    pendingOptions BLOB,
                    CHECK ((frameX IS NULL) = (frameY IS NULL)
                           AND (frameX IS NULL) = (frameWidth IS NULL)
                           AND (frameX IS NULL) = (frameHeight IS NULL))
                );
                CREATE INDEX sceneSession_appID ON sceneSession(appID);

                CREATE TABLE knownApp (
                    appID TEXT PRIMARY KEY NOT NULL,
                    manifest BLOB NOT NULL,
                    registeredAt REAL NOT NULL
                );

                CREATE TABLE pendingDiscard (
                    appID TEXT NOT NULL,
                    persistentIdentifier TEXT NOT NULL,
                    addedAt REAL NOT NULL,
                    PRIMARY KEY (appID, persistentIdentifier)
                );
                """)
        }
        return migrator
    }
}
