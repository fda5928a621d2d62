"""What an attacker with write access to Redis can build without the cluster
secret: kernel-cache records with correct CRC-32C (cache/record.h) wrapped as
shared-tier values (cache/shared_tier_record.h) signed with a wrong key; and a
tiny RESP client to read and write Redis directly."""

import hashlib
import hmac
import socket
import struct


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def encode_record(payload):
    """cache/record.h: "FKCR", version 1, length, CRC of payload, CRC of header."""
    head = b"FKCR" + struct.pack("<IQI", 1, len(payload), crc32c(payload))
    return head + struct.pack("<I", crc32c(head)) + payload


def encode_shared_record(secret, redis_key, payload):
    """cache/shared_tier_record.h: "FSR1", key length, key, record, HMAC-SHA256."""
    key = redis_key.encode() if isinstance(redis_key, str) else redis_key
    body = b"FSR1" + struct.pack("<I", len(key)) + key + encode_record(payload)
    return body + hmac.new(secret, body, hashlib.sha256).digest()


def decode_shared_payload(value):
    """The payload of a shared-tier value (no checks: for building poisons)."""
    (key_len,) = struct.unpack("<I", value[4:8])
    record = value[8 + key_len:len(value) - 32]
    return record[24:]


class RawRedis:
    """Redis commands over RESP, as anyone who can reach Redis could (no client library)."""

    def __init__(self, port, password=None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""
        if password:
            self.command(b"AUTH", password.encode())

    def close(self):
        self.sock.close()

    def command(self, *args):
        args = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        out = b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)
        self.sock.sendall(out)
        return self._reply()

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("redis closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(65536)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if kind == b"*":
            return [self._reply() for _ in range(int(rest))]
        raise RuntimeError(f"bad RESP reply {line!r}")
