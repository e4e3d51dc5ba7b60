#ifndef STASIS_CLIBNOTIFY_SHIM_H
#define STASIS_CLIBNOTIFY_SHIM_H
// Debian's libnotify (freedesktop notifications over D-Bus), and the few GDBus calls StasisNotify
// makes itself: GVariant's constructors are variadic, which Swift cannot call, so each call that
// needs one is a small function here.
#include <libnotify/notify.h>
#include <gio/gio.h>

// The session bus (the process's shared connection), with exit-on-close turned off: GLib's default
// raises SIGTERM in a process whose session bus goes away, and a game must not be killed because
// its notification service did. NULL and `error` set when there is no session bus.
static inline GDBusConnection *stasis_notify_session_bus(GError **error) {
  GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, error);
  if (bus != NULL) g_dbus_connection_set_exit_on_close(bus, FALSE);
  return bus;
}

// A method of the bus itself (org.freedesktop.DBus) that takes one string and returns one
// boolean: NameHasOwner. 1 or 0, or -1 and `error` set.
static inline int stasis_notify_bus_boolean(GDBusConnection *bus, const char *method, const char *name,
                                            int timeout_ms, GError **error) {
  GVariant *reply = g_dbus_connection_call_sync(
      bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", method,
      g_variant_new("(s)", name), G_VARIANT_TYPE("(b)"), G_DBUS_CALL_FLAGS_NONE, timeout_ms, NULL, error);
  if (reply == NULL) return -1;
  gboolean value = FALSE;
  g_variant_get(reply, "(b)", &value);
  g_variant_unref(reply);
  return value ? 1 : 0;
}

// Whether the bus can start a service for `name` on demand (a .service file). 1 or 0, or -1 and
// `error` set.
static inline int stasis_notify_activatable(GDBusConnection *bus, const char *name, int timeout_ms, GError **error) {
  GVariant *reply = g_dbus_connection_call_sync(
      bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ListActivatableNames", NULL,
      G_VARIANT_TYPE("(as)"), G_DBUS_CALL_FLAGS_NONE, timeout_ms, NULL, error);
  if (reply == NULL) return -1;
  GVariant *names = g_variant_get_child_value(reply, 0);
  int found = 0;
  for (gsize index = 0; index < g_variant_n_children(names) && !found; index++) {
    GVariant *each = g_variant_get_child_value(names, index);
    found = g_strcmp0(g_variant_get_string(each, NULL), name) == 0;
    g_variant_unref(each);
  }
  g_variant_unref(names);
  g_variant_unref(reply);
  return found;
}

// org.freedesktop.DBus.Peer.Ping to `name`'s owner, which every D-Bus library answers for its
// process: whether the owner is alive, within `timeout_ms`. FALSE and `error` set otherwise.
static inline gboolean stasis_notify_ping(GDBusConnection *bus, const char *name, const char *path, int timeout_ms,
                                          GError **error) {
  GVariant *reply = g_dbus_connection_call_sync(bus, name, path, "org.freedesktop.DBus.Peer", "Ping", NULL, NULL,
                                                G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms, NULL, error);
  if (reply == NULL) return FALSE;
  g_variant_unref(reply);
  return TRUE;
}

#endif
