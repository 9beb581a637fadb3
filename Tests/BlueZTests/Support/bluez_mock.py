#!/usr/bin/python3
"""Drives python-dbusmock's bluez5 template the way bluetoothd behaves, for beacond's tests.

Usage (DBUS_SYSTEM_BUS_ADDRESS must point at the private bus):
  bluez_mock.py add-adapter hci0
  bluez_mock.py remove-adapter hci0
  bluez_mock.py set-powered hci0 true|false
  bluez_mock.py stop-discovery hci0
  bluez_mock.py calls hci0                       # the adapter's method calls, one per line
  bluez_mock.py filters hci0                     # the RSSI of each SetDiscoveryFilter, one per line
  bluez_mock.py removed hci0                     # device paths beacond removed through RemoveDevice
  bluez_mock.py pair hci0 ADDRESS                # a paired device, as the operator's own
  bluez_mock.py monitor-capable hci0             # the adapter offers AdvertisementMonitorManager1
  bluez_mock.py monitor-objects                  # the monitors a client exports, as BlueZ reads them
  bluez_mock.py advertising-capable hci0         # the adapter offers LEAdvertisingManager1
  bluez_mock.py advertised hci0                  # the advertisements registered, as BlueZ read them
  bluez_mock.py wait                             # until org.bluez is on the bus
  bluez_mock.py ibeacon hci0 ADDRESS UUID MAJOR MINOR RSSI [COUNT] [INTERVAL_S]
  bluez_mock.py eddystone-uid hci0 ADDRESS NAMESPACE INSTANCE RSSI [COUNT] [INTERVAL_S]

Advertisements are sent as bluetoothd sends them: PropertiesChanged on the device with RSSI
and ManufacturerData a{qv} / ServiceData a{sv}, through the mock's EmitSignal (Debian's
dbusmock 0.28.7 cannot carry those dictionaries through UpdateProperties).
"""
import sys
import time

import dbus

BUS = dbus.SystemBus()
MOCK = 'org.freedesktop.DBus.Mock'
DEVICE = 'org.bluez.Device1'


# As bluetoothd does, RegisterAdvertisement reads the client's advertisement object
# (Properties.GetAll) before it answers: a client that waits for the answer without
# serving its objects meanwhile never gets one. The caller is found as the beacond process.
READ_ADVERTISEMENT = """
path = str(args[0])
bus = self.connection
dbus_iface = ('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus')
props = None
for name in bus.call_blocking(*dbus_iface, 'ListNames', '', []):
    if not name.startswith(':') or name == bus.get_unique_name():
        continue
    try:
        pid = bus.call_blocking(*dbus_iface, 'GetConnectionUnixProcessID', 's', [name])
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            if not f.read().split(b'\\0')[0].endswith(b'beacond'):
                continue
        props = bus.call_blocking(name, path, 'org.freedesktop.DBus.Properties', 'GetAll', 's',
                                  ['org.bluez.LEAdvertisement1'], timeout=1)
        break
    except (dbus.exceptions.DBusException, OSError):
        continue
if props is None:
    raise dbus.exceptions.DBusException('could not read ' + path, name='org.bluez.Error.Failed')
data = ' '.join('%04x:%s' % (int(k), bytes(v).hex()) for k, v in props['ManufacturerData'].items())
self.__dict__.setdefault('advertised', []).append('%s %s %s %d' % (path, props['Type'], data, int(props.get('TxPower', 0))))
"""


def obj(path):
    return BUS.get_object('org.bluez', path)


def device(adapter, address):
    path = '/org/bluez/%s/dev_%s' % (adapter, address.replace(':', '_').upper())
    try:
        obj(path).Introspect(dbus_interface='org.freedesktop.DBus.Introspectable')
        if path not in [str(p) for p in managed_paths()]:
            raise dbus.exceptions.DBusException('absent')
    except dbus.exceptions.DBusException:
        obj('/').AddDevice(adapter, address, 'beacon', dbus_interface='org.bluez.Mock')
    return path


def managed_paths():
    objects = obj('/').GetManagedObjects(dbus_interface='org.freedesktop.DBus.ObjectManager')
    return objects.keys()


def advertise(path, rssi, manufacturer=None, service=None, count=1, interval=0.0):
    props = {'RSSI': dbus.Int16(rssi, variant_level=1)}
    if manufacturer is not None:
        props['ManufacturerData'] = dbus.Dictionary(
            {dbus.UInt16(k): dbus.Array(v, signature='y', variant_level=1) for k, v in manufacturer.items()},
            signature='qv', variant_level=1)
    if service is not None:
        props['ServiceData'] = dbus.Dictionary(
            {k: dbus.Array(v, signature='y', variant_level=1) for k, v in service.items()},
            signature='sv', variant_level=1)
    o = obj(path)
    for i in range(count):
        o.EmitSignal('org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as',
                     [DEVICE, dbus.Dictionary(props, signature='sv'), dbus.Array([], signature='s')],
                     dbus_interface=MOCK)
        if interval and i + 1 < count:
            time.sleep(interval)


def main(argv):
    cmd = argv[0]
    if cmd == 'add-adapter':
        obj('/').AddAdapter(argv[1], 'gateway', dbus_interface='org.bluez.Mock')
    elif cmd == 'remove-adapter':
        obj('/').RemoveAdapter(argv[1], dbus_interface='org.bluez.Mock')
    elif cmd == 'set-powered':
        value = argv[2] == 'true'
        o = obj('/org/bluez/' + argv[1])
        o.Set('org.bluez.Adapter1', 'Powered', dbus.Boolean(value), dbus_interface='org.freedesktop.DBus.Properties')
        o.EmitSignal('org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as',
                     ['org.bluez.Adapter1', {'Powered': dbus.Boolean(value, variant_level=1)}, dbus.Array([], signature='s')],
                     dbus_interface=MOCK)
    elif cmd == 'stop-discovery':
        obj('/org/bluez/' + argv[1]).StopDiscovery(dbus_interface='org.bluez.Adapter1')
    elif cmd == 'calls':
        for call in obj('/org/bluez/' + argv[1]).GetCalls(dbus_interface=MOCK):
            print(call[1])
    elif cmd == 'filters':
        for call in obj('/org/bluez/' + argv[1]).GetCalls(dbus_interface=MOCK):
            if call[1] == 'SetDiscoveryFilter':
                print(int(call[2][0].get('RSSI', 0)))
    elif cmd == 'removed':
        for call in obj('/org/bluez/' + argv[1]).GetCalls(dbus_interface=MOCK):
            if call[1] == 'RemoveDevice':
                print(str(call[2][0]))
    elif cmd == 'pair':
        device(argv[1], argv[2])
        obj('/').PairDevice(argv[1], argv[2], 0, dbus_interface='org.bluez.Mock')
    elif cmd == 'monitor-capable':
        o = obj('/org/bluez/' + argv[1])
        o.AddProperties('org.bluez.AdvertisementMonitorManager1',
                        {'SupportedMonitorTypes': dbus.Array(['or_patterns'], signature='s')}, dbus_interface=MOCK)
        o.AddMethod('org.bluez.AdvertisementMonitorManager1', 'RegisterMonitor', 'o', '', '', dbus_interface=MOCK)
        o.AddMethod('org.bluez.AdvertisementMonitorManager1', 'UnregisterMonitor', 'o', '', '', dbus_interface=MOCK)
    elif cmd == 'advertising-capable':
        o = obj('/org/bluez/' + argv[1])
        props = {'ActiveInstances': dbus.Byte(0), 'SupportedInstances': dbus.Byte(4),
                 'SupportedIncludes': dbus.Array([], signature='s')}
        o.AddProperties('org.bluez.LEAdvertisingManager1', props, dbus_interface=MOCK)
        o.AddMethod('org.bluez.LEAdvertisingManager1', 'RegisterAdvertisement', 'oa{sv}', '', READ_ADVERTISEMENT,
                    dbus_interface=MOCK)
        o.AddMethod('org.bluez.LEAdvertisingManager1', 'UnregisterAdvertisement', 'o', '', '', dbus_interface=MOCK)
        o.AddMethod(MOCK, 'GetAdvertised', '', 'as', "ret = self.__dict__.get('advertised', [])", dbus_interface=MOCK)
        # As bluetoothd announces an interface added to a live object.
        obj('/').EmitSignal('org.freedesktop.DBus.ObjectManager', 'InterfacesAdded', 'oa{sa{sv}}',
                            [dbus.ObjectPath('/org/bluez/' + argv[1]),
                             {'org.bluez.LEAdvertisingManager1': dbus.Dictionary(props, signature='sv')}],
                            dbus_interface=MOCK)
    elif cmd == 'advertised':
        for line in obj('/org/bluez/' + argv[1]).GetAdvertised(dbus_interface=MOCK):
            print(line)
    elif cmd == 'monitor-objects':
        # As BlueZ does after RegisterMonitor: read the monitors the client exports.
        names = BUS.get_object('org.freedesktop.DBus', '/org/freedesktop/DBus').ListNames(
            dbus_interface='org.freedesktop.DBus')
        for name in names:
            if not name.startswith(':') or name == BUS.get_unique_name():
                continue
            try:
                objects = BUS.call_blocking(name, '/org/beacond/monitor', 'org.freedesktop.DBus.ObjectManager',
                                            'GetManagedObjects', '', [], timeout=0.5)
            except dbus.exceptions.DBusException:
                continue
            for path, interfaces in objects.items():
                monitor = interfaces['org.bluez.AdvertisementMonitor1']
                patterns = ' '.join('%d:%02x:%s' % (p[0], p[1], bytes(p[2]).hex()) for p in monitor['Patterns'])
                print('%s %s %s' % (path, monitor['Type'], patterns))
    elif cmd == 'wait':
        deadline = time.time() + 10
        while time.time() < deadline:
            if BUS.name_has_owner('org.bluez'):
                return
            time.sleep(0.05)
        sys.exit('org.bluez did not appear')
    elif cmd == 'ibeacon':
        adapter, address, uuid, major, minor, rssi = argv[1:7]
        count = int(argv[7]) if len(argv) > 7 else 1
        interval = float(argv[8]) if len(argv) > 8 else 0.0
        payload = [0x02, 0x15] + list(bytes.fromhex(uuid.replace('-', ''))) + \
            [int(major) >> 8, int(major) & 0xFF, int(minor) >> 8, int(minor) & 0xFF, 0xC5]
        advertise(device(adapter, address), int(rssi), manufacturer={0x004C: payload}, count=count, interval=interval)
    elif cmd == 'eddystone-uid':
        adapter, address, namespace, instance, rssi = argv[1:6]
        count = int(argv[6]) if len(argv) > 6 else 1
        interval = float(argv[7]) if len(argv) > 7 else 0.0
        payload = [0x00, 0xE7] + list(bytes.fromhex(namespace)) + list(bytes.fromhex(instance)) + [0, 0]
        advertise(device(adapter, address), int(rssi),
                  service={'0000feaa-0000-1000-8000-00805f9b34fb': payload}, count=count, interval=interval)
    else:
        sys.exit('unknown command ' + cmd)


if __name__ == '__main__':
    main(sys.argv[1:])
