#!/usr/bin/env python3
"""A fake ESPHome Bluetooth proxy for the tests: ESPHome's native API server side, plaintext,
with its messages made by aioesphomeapi's own `api_pb2` and framed by its
`make_plain_text_packets`, so it is right by construction as far as the client library Home
Assistant uses goes (tests check it against that client first).

    esphome_proxy.py --port-file F --log L [--name N] [--adverts FILE] [--rate HZ]
                     [--password P] [--behaviour normal|never-hello|drop-mid-frame|oversize]

Listens on 127.0.0.1 (port 0: the kernel's choice, written to --port-file). Once a client
subscribes to raw advertisements, it sends the advertisements of --adverts (JSON lines:
{"address": "C3:11:22:33:44:55", "rssi": -67, "address_type": 1, "data": "<hex AD bytes>"})
in batches of up to 16, --rate batches a second, round and round. Every message it reads is
logged to --log as a JSON line ({"got": "HelloRequest", ...}), so a test can see the exchange.
"""
import argparse
import asyncio
import json
import sys

from aioesphomeapi import api_pb2
from aioesphomeapi._frame_helper.packets import make_plain_text_packets
from aioesphomeapi.core import MESSAGE_TYPE_TO_PROTO

TYPE_OF = {cls: t for t, cls in MESSAGE_TYPE_TO_PROTO.items()}


def frame(message):
    return b"".join(make_plain_text_packets([(TYPE_OF[type(message)], message.SerializeToString())]))


def read_varint(buffer, at):
    value, shift = 0, 0
    while at < len(buffer):
        byte = buffer[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
    return None, at


class Proxy:
    def __init__(self, args):
        self.args = args
        self.log = open(args.log, "a", buffering=1)
        self.adverts = []
        if args.adverts:
            with open(args.adverts) as f:
                for line in f:
                    if line.strip():
                        a = json.loads(line)
                        self.adverts.append(
                            api_pb2.BluetoothLERawAdvertisement(
                                address=int(a["address"].replace(":", ""), 16), rssi=a["rssi"],
                                address_type=a.get("address_type", 0), data=bytes.fromhex(a["data"])))

    def note(self, **fields):
        self.log.write(json.dumps(fields) + "\n")

    async def serve(self, reader, writer):
        self.note(event="connected")
        buffer = b""
        sender = None
        try:
            while True:
                chunk = await reader.read(4096)
                if not chunk:
                    break
                buffer += chunk
                while True:
                    if not buffer:
                        break
                    if buffer[0] != 0:
                        self.note(event="bad-preamble", byte=buffer[0])
                        writer.close()
                        return
                    length, at = read_varint(buffer, 1)
                    if length is None:
                        break
                    kind, at = read_varint(buffer, at)
                    if kind is None or len(buffer) - at < length:
                        break
                    payload, buffer = buffer[at:at + length], buffer[at + length:]
                    message = MESSAGE_TYPE_TO_PROTO[kind]()
                    message.ParseFromString(payload)
                    name = type(message).__name__
                    self.note(got=name, fields={f.name: (v if isinstance(v, (int, str, bool)) else str(v))
                                                for f, v in message.ListFields()})
                    answer = self.answer(message)
                    if answer == "subscribe":
                        if self.args.behaviour == "drop-mid-frame":
                            whole = frame(self.batch(0))
                            writer.write(whole[: len(whole) // 2])
                            await writer.drain()
                            writer.close()
                            self.note(event="dropped-mid-frame")
                            return
                        if self.args.behaviour == "oversize":
                            writer.write(b"\x00\x80\x80\x08\x5d")  # a 131,072-byte frame's header
                            await writer.drain()
                            self.note(event="sent-oversize")
                            continue
                        sender = asyncio.ensure_future(self.send_adverts(writer))
                    elif answer == "close":
                        writer.close()
                        self.note(event="closed")
                        return
                    elif answer:
                        writer.write(answer)
                        await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            if sender:
                sender.cancel()
            self.note(event="disconnected")

    def answer(self, message):
        name = type(message).__name__
        if name == "HelloRequest":
            if self.args.behaviour == "never-hello":
                return None
            return frame(api_pb2.HelloResponse(
                api_version_major=1, api_version_minor=12, server_info=f"{self.args.name} (esphome v2025.11.0)",
                name=self.args.name))
        if name == "AuthenticationRequest":
            if self.args.password is not None and message.password != self.args.password:
                return frame(api_pb2.AuthenticationResponse(invalid_password=True))
            return None
        if name == "DeviceInfoRequest":
            return frame(api_pb2.DeviceInfoResponse(
                uses_password=self.args.password is not None, name=self.args.name,
                mac_address="AA:BB:CC:00:11:22", esphome_version="2025.11.0", model="esp32-c3-devkitm-1",
                manufacturer="Espressif", friendly_name=f"{self.args.name} proxy", bluetooth_proxy_feature_flags=127,
                bluetooth_mac_address="AA:BB:CC:00:11:24"))
        if name == "PingRequest":
            return frame(api_pb2.PingResponse())
        if name == "DisconnectRequest":
            return frame(api_pb2.DisconnectResponse()) + b""  # then the client closes
        if name == "SubscribeBluetoothLEAdvertisementsRequest":
            return "subscribe"
        return None

    def batch(self, start):
        if not self.adverts:
            return api_pb2.BluetoothLERawAdvertisementsResponse()
        chosen = [self.adverts[(start + i) % len(self.adverts)] for i in range(min(16, len(self.adverts)))]
        return api_pb2.BluetoothLERawAdvertisementsResponse(advertisements=chosen)

    async def send_adverts(self, writer):
        n = 0
        while True:
            writer.write(frame(self.batch(n)))
            await writer.drain()
            n += 16
            await asyncio.sleep(1 / self.args.rate)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--name", default="proxy-a")
    parser.add_argument("--adverts")
    parser.add_argument("--rate", type=float, default=10)
    parser.add_argument("--password")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--behaviour", default="normal",
                        choices=["normal", "never-hello", "drop-mid-frame", "oversize"])
    args = parser.parse_args()
    proxy = Proxy(args)
    server = await asyncio.start_server(proxy.serve, "127.0.0.1", args.port)
    port = server.sockets[0].getsockname()[1]
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(port))
    import os
    os.replace(args.port_file + ".tmp", args.port_file)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
