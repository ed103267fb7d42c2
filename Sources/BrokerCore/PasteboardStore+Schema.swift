import GRDB

extension PasteboardStore {
    /// The schema, as GRDB migrations. A migration, once shipped, is never edited: a change
    /// is a new migration appended here.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE pasteboard (
                    name TEXT PRIMARY KEY NOT NULL,
                    changeCount INTEGER NOT NULL DEFAULT 0
                );
                INSERT INTO pasteboard (name, changeCount) VALUES ('general', 0);

                CREATE TABLE historyEntry (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    changeCount INTEGER NOT NULL,
                    replacedAt REAL NOT NULL
                );

                CREATE TABLE item (
                    id TEXT PRIMARY KEY NOT NULL,
                    pasteboard TEXT REFERENCES pasteboard(name) ON DELETE CASCADE,
                    historyEntry INTEGER REFERENCES historyEntry(id) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    localOnly INTEGER NOT NULL,
                    expirationDate REAL,
                    sourceAppID TEXT,
                    suggestedName TEXT,
                    CHECK ((pasteboard IS NULL) <> (historyEntry IS NULL))
                );
                CREATE INDEX item_pasteboard ON item(pasteboard, position);
                CREATE INDEX item_historyEntry ON item(historyEntry, position);

                CREATE TABLE representation (
                    item TEXT NOT NULL REFERENCES item(id) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    contentType TEXT NOT NULL,
                    visibility TEXT NOT NULL CHECK (visibility IN ('all', 'ownApp')),
                    size INTEGER,
                    storage TEXT NOT NULL CHECK (storage IN ('inline', 'blob', 'promised', 'unavailable')),
                    data BLOB,
                    blob TEXT UNIQUE,
                    owner TEXT,
                    PRIMARY KEY (item, position),
                    UNIQUE (item, contentType),
                    CHECK ((storage = 'inline') = (data IS NOT NULL)),
                    CHECK ((storage = 'blob') = (blob IS NOT NULL)),
                    CHECK ((storage = 'promised') = (owner IS NOT NULL))
                );
                CREATE INDEX representation_owner ON representation(owner) WHERE owner IS NOT NULL;

                CREATE TABLE pasteLog (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    timestamp REAL NOT NULL,
                    appID TEXT,
                    uniqueName TEXT NOT NULL,
                    uid INTEGER NOT NULL,
                    pid INTEGER NOT NULL,
                    pasteboard TEXT NOT NULL,
                    itemIndex INTEGER NOT NULL,
                    contentType TEXT NOT NULL
                );
                """)
        }
        // A blob's checksum (XXH64 as a signed 64-bit integer) and the identity of its file
        // when the checksum was last known to hold (inode, ctime in ns). Rows of blobs written
        // before are left NULL: their first read checksums the file and records both.
        migrator.registerMigration("v2 blob checksums") { db in
            try db.execute(sql: """
                ALTER TABLE representation ADD COLUMN checksum INTEGER;
                ALTER TABLE representation ADD COLUMN blobInode INTEGER;
                ALTER TABLE representation ADD COLUMN blobChangeTime INTEGER;
                """)
        }
        // An item's origin outside Ferry, as its writer said it (SetItems key origin); rows
        // written before have none.
        migrator.registerMigration("v3 item origin") { db in
            try db.execute(sql: "ALTER TABLE item ADD COLUMN origin TEXT")
        }
        // The reader's process name in the paste log; records logged before have none.
        migrator.registerMigration("v4 paste log process") { db in
            try db.execute(sql: "ALTER TABLE pasteLog ADD COLUMN process TEXT")
        }
        // How the user answered a read that asked for consent; records logged before have none.
        migrator.registerMigration("v5 paste log consent") { db in
            try db.execute(sql: "ALTER TABLE pasteLog ADD COLUMN consent TEXT")
        }
        // The writer's process name on each item (who copied it), and in the paste log beside
        // the reader's, with the history entry a paste read (NULL for an ordinary paste). Rows
        // written before have none of them.
        migrator.registerMigration("v6 writer process and history reads") { db in
            try db.execute(sql: """
                ALTER TABLE item ADD COLUMN sourceProcess TEXT;
                ALTER TABLE pasteLog ADD COLUMN writerProcess TEXT;
                ALTER TABLE pasteLog ADD COLUMN historyEntry INTEGER;
                """)
        }
        return migrator
    }
}
