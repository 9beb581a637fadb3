#!/usr/bin/python3
"""Avahi's D-Bus face on the private system bus, for beacond's discovery tests: owns
org.freedesktop.Avahi; `Server.ServiceBrowserNew` makes a browser that announces each service
of the JSON file given (ItemNew), then AllForNow; `Server.ResolveService` answers with the
service's host, address, port and TXT record, as avahi-daemon does (avahi-daemon's
org.freedesktop.Avahi.Server and ServiceBrowser interfaces, their signatures as documented).

    avahi_mock.py SERVICES.json     # [{"name", "type", "host", "address", "port", "txt": {k: v}}]
"""
import json
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

SERVER = "org.freedesktop.Avahi.Server"
BROWSER = "org.freedesktop.Avahi.ServiceBrowser"


class Browser(dbus.service.Object):
    def __init__(self, bus, path, services):
        super().__init__(bus, path)
        self.services = services

    @dbus.service.signal(BROWSER, signature="iisssu")
    def ItemNew(self, interface, protocol, name, type_, domain, flags):
        pass

    @dbus.service.signal(BROWSER, signature="")
    def AllForNow(self):
        pass

    def announce(self):
        for s in self.services:
            self.ItemNew(2, 0, s["name"], s["type"], "local", 0)
        self.AllForNow()
        return False


class Server(dbus.service.Object):
    def __init__(self, bus, services):
        super().__init__(bus, "/")
        self.bus = bus
        self.services = services
        self.browsers = 0

    @dbus.service.method(SERVER, in_signature="iissu", out_signature="o")
    def ServiceBrowserNew(self, interface, protocol, type_, domain, flags):
        self.browsers += 1
        path = f"/Client1/ServiceBrowser{self.browsers}"
        browser = Browser(self.bus, path, [s for s in self.services if s["type"] == type_])
        GLib.timeout_add(50, browser.announce)
        return dbus.ObjectPath(path)

    @dbus.service.method(SERVER, in_signature="iisssiu", out_signature="iissssisqaayu")
    def ResolveService(self, interface, protocol, name, type_, domain, aprotocol, flags):
        for s in self.services:
            if s["name"] == name and s["type"] == type_:
                txt = dbus.Array([dbus.ByteArray(f"{k}={v}".encode()) for k, v in s["txt"].items()], signature="ay")
                return (interface, protocol, name, type_, domain, s["host"], 0, s["address"], dbus.UInt16(s["port"]),
                        txt, dbus.UInt32(0))
        raise dbus.exceptions.DBusException("timeout", name="org.freedesktop.Avahi.TimeoutError")


DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
services = json.load(open(sys.argv[1]))
name = dbus.service.BusName("org.freedesktop.Avahi", bus)
server = Server(bus, services)
print("ready", flush=True)
GLib.MainLoop().run()
