"""A freedesktop notification server for StasisNotify's tests (Debian's python3-dbus, GLib's loop).

  python3 notification-recorder.py ADDRESS RECORD [--refuse]

Owns org.freedesktop.Notifications on the bus at ADDRESS and appends one JSON line to RECORD for
each thing that happens: {"event": "ready"} once it owns the name, then one "notify" line per
Notify call (app_name, replaces_id, summary, body, hints, and the id it answered). With --refuse,
Notify answers the D-Bus error org.freedesktop.Notifications.Error.Refused (a "refused" line).
It exits on SIGTERM, and when its standard input closes (the test process ended).
"""

import json
import signal
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"


def plain(value):
    """A D-Bus value as JSON's: dbus.Boolean is an int subclass, so it goes first."""
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (int, float, str)):
        return value
    if isinstance(value, (list, tuple, dbus.Array, dbus.Struct)):
        return [plain(each) for each in value]
    if isinstance(value, dict):
        return {str(key): plain(each) for key, each in value.items()}
    return str(value)


class Recorder(dbus.service.Object):
    def __init__(self, bus, record, refuse):
        super().__init__(bus, PATH)
        self.record = record
        self.refuse = refuse
        self.shown = set()
        self.last_id = 0

    def write(self, entry):
        with open(self.record, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, sort_keys=True) + "\n")

    @dbus.service.method(NAME, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout):
        entry = {
            "app_name": str(app_name),
            "replaces_id": int(replaces_id),
            "summary": str(summary),
            "body": str(body),
            "hints": plain(hints),
        }
        if self.refuse:
            self.write(dict(entry, event="refused"))
            raise dbus.exceptions.DBusException("refused by the test", name=NAME + ".Error.Refused")
        if replaces_id in self.shown:
            identifier = int(replaces_id)
        else:
            self.last_id += 1
            identifier = self.last_id
        self.shown.add(identifier)
        self.write(dict(entry, event="notify", id=identifier))
        return dbus.UInt32(identifier)

    @dbus.service.method(NAME, in_signature="", out_signature="as")
    def GetCapabilities(self):
        return ["body"]

    @dbus.service.method(NAME, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("stasis-notification-recorder", "Stasis", "1.0", "1.2")

    @dbus.service.method(NAME, in_signature="u", out_signature="")
    def CloseNotification(self, identifier):
        if identifier in self.shown:
            self.shown.discard(identifier)
            self.NotificationClosed(identifier, 3)

    @dbus.service.signal(NAME, signature="uu")
    def NotificationClosed(self, identifier, reason):
        pass


def main():
    # A process inherits its parent thread's blocked signals, and the test runner's threads block
    # nearly all of them: without this, SIGTERM would stay pending for ever.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
    address, record = sys.argv[1], sys.argv[2]
    refuse = "--refuse" in sys.argv[3:]
    loop = GLib.MainLoop()
    bus = dbus.bus.BusConnection(address, mainloop=DBusGMainLoop())
    recorder = Recorder(bus, record, refuse)
    if bus.request_name(NAME, dbus.bus.NAME_FLAG_DO_NOT_QUEUE) != dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER:
        sys.exit(f"{NAME} is owned by another process on {address}")
    recorder.write({"event": "ready"})
    GLib.unix_signal_add(GLib.PRIORITY_HIGH, signal.SIGTERM, lambda: loop.quit() or False)

    def stdin_closed(source, condition):
        loop.quit()
        return False

    GLib.io_add_watch(sys.stdin.fileno(), GLib.PRIORITY_DEFAULT, GLib.IO_HUP | GLib.IO_ERR | GLib.IO_IN, stdin_closed)
    loop.run()


if __name__ == "__main__":
    main()
