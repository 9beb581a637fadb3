#!/usr/bin/env python3
"""Checks the fake proxy against the real client: aioesphomeapi's APIClient (what Home
Assistant uses) connects to it, reads its device info, subscribes to raw advertisements and
prints what it reads back, one JSON line per advertisement, then exits.

    esphome_client_check.py PORT COUNT [KEY]    (KEY: the API encryption key, base64)
"""
import asyncio
import json
import sys

from aioesphomeapi import APIClient


async def main():
    port, count = int(sys.argv[1]), int(sys.argv[2])
    key = sys.argv[3] if len(sys.argv) > 3 else None
    client = APIClient("127.0.0.1", port, "", noise_psk=key)
    await client.connect(login=True)
    info = await client.device_info()
    print(json.dumps({"name": info.name, "model": info.model, "esphome_version": info.esphome_version}), flush=True)
    got = []
    done = asyncio.Event()

    def on_raw(response):
        for ad in response.advertisements:
            got.append({"address": ad.address, "rssi": ad.rssi, "address_type": ad.address_type, "data": ad.data.hex()})
        if len(got) >= count:
            done.set()

    unsubscribe = client.subscribe_bluetooth_le_raw_advertisements(on_raw)
    await asyncio.wait_for(done.wait(), 10)
    unsubscribe()
    for ad in got[:count]:
        print(json.dumps(ad), flush=True)
    await client.disconnect()


asyncio.run(main())
