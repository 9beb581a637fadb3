#!/usr/bin/env python3
"""A fake ESPHome Bluetooth proxy for the tests: ESPHome's native API server side, with its
messages made by aioesphomeapi's own `api_pb2`, framed in plaintext by its
`make_plain_text_packets` or encrypted with the `noise` library it uses (--key: the
responder of Noise_NNpsk0_25519_ChaChaPoly_SHA256, as ESPHome's firmware), so it is right by
construction as far as the client library Home Assistant uses goes (tests check it against
that client first).

    esphome_proxy.py --port-file F --log L [--name N] [--adverts FILE] [--rate HZ] [--key BASE64]
                     [--password P] [--behaviour normal|never-hello|drop-mid-frame|oversize]
                     [--count N] [--batch B]

--count N: N proxies in this one process, each on a port of its own (the port file lists
them, one a line; a benchmark's 50 proxies). --batch B: advertisements per message (16).

Listens on 127.0.0.1 (port 0: the kernel's choice, written to --port-file). Once a client
subscribes to raw advertisements, it sends the advertisements of --adverts (JSON lines:
{"address": "C3:11:22:33:44:55", "rssi": -67, "address_type": 1, "data": "<hex AD bytes>"})
in batches of up to 16, --rate batches a second, round and round. Every message it reads is
logged to --log as a JSON line ({"got": "HelloRequest", ...}), so a test can see the exchange.
"""
import argparse
import asyncio
import base64
import json
import sys

from aioesphomeapi import api_pb2
from aioesphomeapi._frame_helper.packets import make_plain_text_packets
from aioesphomeapi.core import MESSAGE_TYPE_TO_PROTO
from noise.connection import NoiseConnection

TYPE_OF = {cls: t for t, cls in MESSAGE_TYPE_TO_PROTO.items()}


def frame(message):
    return b"".join(make_plain_text_packets([(TYPE_OF[type(message)], message.SerializeToString())]))


class PlainFraming:
    """Plaintext: 0x00, varint length, varint type, payload."""

    def __init__(self, proxy):
        self.buffer = b""
        self.proxy = proxy

    def feed(self, data):
        """The whole messages received so far, and bytes to answer with at once (none)."""
        self.buffer += data
        messages = []
        while self.buffer:
            if self.buffer[0] != 0:
                raise ValueError(f"bad preamble {self.buffer[0]}")
            length, at = read_varint(self.buffer, 1)
            if length is None:
                break
            kind, at = read_varint(self.buffer, at)
            if kind is None or len(self.buffer) - at < length:
                break
            messages.append((kind, self.buffer[at:at + length]))
            self.buffer = self.buffer[at + length:]
        return messages, b""

    def encode(self, message):
        return frame(message)


class NoiseFraming:
    """Encrypted: 0x01, 16-bit length, frame; the client's hello, the handshake, then messages
    of 16-bit type and length, encrypted, as ESPHome's firmware answers."""

    def __init__(self, proxy, key):
        self.buffer = b""
        self.proxy = proxy
        self.noise = NoiseConnection.from_name(b"Noise_NNpsk0_25519_ChaChaPoly_SHA256")
        self.noise.set_as_responder()
        self.noise.set_psks(key)
        self.noise.set_prologue(b"NoiseAPIInit\x00\x00")
        self.noise.start_handshake()
        self.state = "hello"

    @staticmethod
    def wrap(data):
        return bytes((0x01, len(data) >> 8, len(data) & 0xFF)) + data

    def feed(self, data):
        self.buffer += data
        messages, answer = [], b""
        while len(self.buffer) >= 3:
            if self.buffer[0] != 0x01:
                # As the firmware answers a plaintext client: a refusal in its own framing.
                self.proxy.note(event="plaintext-client")
                raise HandshakeRefused(self.wrap(b"\x01Bad indicator byte"))
            length = self.buffer[1] << 8 | self.buffer[2]
            if len(self.buffer) - 3 < length:
                break
            body, self.buffer = self.buffer[3:3 + length], self.buffer[3 + length:]
            if self.state == "hello":
                answer += self.wrap(b"\x01" + self.proxy.args.name.encode() + b"\x00AA:BB:CC:00:11:22\x00")
                self.state = "handshake"
            elif self.state == "handshake":
                try:
                    self.noise.read_message(body[1:])
                except Exception:  # the key is not this proxy's
                    self.proxy.note(event="handshake-mac-failure")
                    raise HandshakeRefused(answer + self.wrap(b"\x01Handshake MAC failure"))
                answer += self.wrap(b"\x00" + self.noise.write_message())
                self.state = "ready"
                self.proxy.note(event="handshake-done")
            else:
                plain = self.noise.decrypt(body)
                kind, size = plain[0] << 8 | plain[1], plain[2] << 8 | plain[3]
                messages.append((kind, plain[4:4 + size]))
        return messages, answer

    def encode(self, message):
        payload = message.SerializeToString()
        kind = TYPE_OF[type(message)]
        header = bytes((kind >> 8, kind & 0xFF, len(payload) >> 8, len(payload) & 0xFF))
        return self.wrap(self.noise.encrypt(header + payload))


class HandshakeRefused(Exception):
    def __init__(self, answer):
        super().__init__("handshake refused")
        self.answer = answer


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
        self.key = base64.b64decode(args.key) if args.key else None
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
        framing = NoiseFraming(self, self.key) if self.key else PlainFraming(self)
        self.framing = framing
        sender = None
        try:
            while True:
                chunk = await reader.read(4096)
                if not chunk:
                    break
                try:
                    messages, answer = framing.feed(chunk)
                except HandshakeRefused as refused:
                    writer.write(refused.answer)
                    await writer.drain()
                    writer.close()
                    return
                except ValueError as error:
                    self.note(event="bad-frame", reason=str(error))
                    writer.close()
                    return
                if answer:
                    writer.write(answer)
                    await writer.drain()
                for kind, payload in messages:
                    message = MESSAGE_TYPE_TO_PROTO[kind]()
                    message.ParseFromString(payload)
                    name = type(message).__name__
                    self.note(got=name, fields={f.name: (v if isinstance(v, (int, str, bool)) else str(v))
                                                for f, v in message.ListFields()})
                    reply = self.answer(message)
                    if reply == "subscribe":
                        if self.args.behaviour == "drop-mid-frame":
                            whole = framing.encode(self.batch(0))
                            writer.write(whole[: len(whole) // 2])
                            await writer.drain()
                            writer.close()
                            self.note(event="dropped-mid-frame")
                            return
                        if self.args.behaviour == "ping-flood":
                            # Pings as fast as the socket takes them, never reading an answer.
                            self.note(event="flooding")
                            ping = framing.encode(api_pb2.PingRequest())
                            while True:
                                writer.write(ping * 4096)
                                await writer.drain()
                        if self.args.behaviour == "oversize":
                            writer.write(b"\x00\x80\x80\x08\x5d")  # a 131,072-byte frame's header
                            await writer.drain()
                            self.note(event="sent-oversize")
                            continue
                        sender = asyncio.ensure_future(self.send_adverts(writer, framing))
                    elif reply is not None:
                        writer.write(framing.encode(reply))
                        await writer.drain()
                        if self.args.behaviour == "drop-after-hello" and name == "HelloRequest":
                            # Old firmware when Home Assistant takes the connection back.
                            writer.close()
                            self.note(event="dropped-after-hello")
                            return
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
            return api_pb2.HelloResponse(
                api_version_major=1, api_version_minor=12, server_info=f"{self.args.name} (esphome v2025.11.0)",
                name=self.args.name)
        if name == "AuthenticationRequest":
            if self.args.password is not None and message.password != self.args.password:
                return api_pb2.AuthenticationResponse(invalid_password=True)
            return None
        if name == "DeviceInfoRequest":
            return api_pb2.DeviceInfoResponse(
                uses_password=self.args.password is not None, name=self.args.name,
                mac_address="AA:BB:CC:00:11:22", esphome_version="2025.11.0", model="esp32-c3-devkitm-1",
                manufacturer="Espressif", friendly_name=f"{self.args.name} proxy", bluetooth_proxy_feature_flags=127,
                bluetooth_mac_address="AA:BB:CC:00:11:24", api_encryption_supported=self.key is not None)
        if name == "PingRequest":
            return api_pb2.PingResponse()
        if name == "DisconnectRequest":
            return api_pb2.DisconnectResponse()  # then the client closes
        if name == "SubscribeBluetoothLEAdvertisementsRequest":
            return "subscribe"
        return None

    def batch(self, start):
        if not self.adverts:
            return api_pb2.BluetoothLERawAdvertisementsResponse()
        chosen = [self.adverts[(start + i) % len(self.adverts)] for i in range(self.args.batch)]
        return api_pb2.BluetoothLERawAdvertisementsResponse(advertisements=chosen)

    async def send_adverts(self, writer, framing):
        n = 0
        while True:
            writer.write(framing.encode(self.batch(n)))
            await writer.drain()
            n += self.args.batch
            await asyncio.sleep(1 / self.args.rate)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--name", default="proxy-a")
    parser.add_argument("--adverts")
    parser.add_argument("--rate", type=float, default=10)
    parser.add_argument("--password")
    parser.add_argument("--key", help="the API encryption key, base64: the proxy speaks Noise")
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--behaviour", default="normal",
                        choices=["normal", "never-hello", "drop-mid-frame", "oversize", "drop-after-hello", "ping-flood"])
    args = parser.parse_args()
    proxy = Proxy(args)
    servers = [await asyncio.start_server(proxy.serve, "127.0.0.1", args.port if args.count == 1 else 0)
               for _ in range(args.count)]
    ports = [server.sockets[0].getsockname()[1] for server in servers]
    with open(args.port_file + ".tmp", "w") as f:
        f.write("\n".join(map(str, ports)))
    import os
    os.replace(args.port_file + ".tmp", args.port_file)
    await asyncio.gather(*(server.serve_forever() for server in servers))


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
