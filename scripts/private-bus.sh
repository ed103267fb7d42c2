# Sourced by the demo and bench scripts: a private dbus-daemon when the caller has no session bus
# (or always, with FERRY_PRIVATE_BUS=1). Never touches a real session bus's state.
start_private_bus() {
  if [ -n "${DBUS_SESSION_BUS_ADDRESS:-}" ] && [ "${FERRY_PRIVATE_BUS:-1}" != 1 ]; then
    return 0
  fi
  FERRY_BUS_DIR=$(mktemp -d)
  dbus-daemon --config-file="$PWD/Fixtures/dbus/session.conf" --address="unix:dir=$FERRY_BUS_DIR" \
    --print-address=3 --print-pid=4 --fork 3>"$FERRY_BUS_DIR/address" 4>"$FERRY_BUS_DIR/pid"
  DBUS_SESSION_BUS_ADDRESS=$(head -n1 "$FERRY_BUS_DIR/address")
  FERRY_BUS_PID=$(head -n1 "$FERRY_BUS_DIR/pid")
  export DBUS_SESSION_BUS_ADDRESS FERRY_BUS_PID FERRY_BUS_DIR
}

stop_private_bus() {
  if [ -n "${FERRY_BUS_PID:-}" ]; then
    kill "$FERRY_BUS_PID" 2>/dev/null || true
    rm -rf "$FERRY_BUS_DIR"
    unset FERRY_BUS_PID
  fi
}
