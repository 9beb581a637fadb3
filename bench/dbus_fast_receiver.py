"""The comparison receiver for the D-Bus ingest benchmark: dbus-fast (the Cython D-Bus
library under bleak and Home Assistant), decoding each PropertiesChanged the way bleak's
BlueZ manager does — body unmarshalled, RSSI and ManufacturerData read out.

Prints "ready" once subscribed, then, after COUNT signals, one JSON line like
beacond-dbus-bench's: wall time from the first signal to the last, process CPU time.
  python3 dbus_fast_receiver.py COUNT
"""
import asyncio
import json
import sys
import time

from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000


async def main():
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    await bus.call(Message(
        destination='org.freedesktop.DBus', path='/org/freedesktop/DBus', interface='org.freedesktop.DBus',
        member='AddMatch', signature='s',
        body=["type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"]))
    done = asyncio.get_running_loop().create_future()
    state = {'count': 0, 'first': None, 'rssi': 0, 'bytes': 0}

    def handler(message):
        if message.message_type != MessageType.SIGNAL or message.member != 'PropertiesChanged':
            return
        if state['first'] is None:
            state['first'] = time.monotonic()
        interface, changed, _ = message.body
        if interface == 'org.bluez.Device1':
            if 'RSSI' in changed:
                state['rssi'] += changed['RSSI'].value
            if 'ManufacturerData' in changed:
                for company, data in changed['ManufacturerData'].value.items():
                    state['bytes'] += len(data.value)
        state['count'] += 1
        if state['count'] == COUNT and not done.done():
            done.set_result(time.monotonic())

    bus.add_message_handler(handler)
    print('ready', flush=True)
    cpu0 = time.process_time()
    end = await done
    print(json.dumps({'receiver': 'dbus-fast', 'signals': state['count'], 'wall_s': end - state['first'],
                      'cpu_s': time.process_time() - cpu0}), flush=True)


asyncio.run(main())
