"""Frames between the gateway and its recall workers: a 4-byte length, then a pickle.

Only the gateway's own children speak on this socket: it lives in a directory only the
gateway's user can enter, and a connection must first send the 32-byte secret the gateway gave
the child at spawn (compared before anything is unpickled).
"""

from __future__ import annotations

import asyncio
import pickle
import struct
from typing import Any

#: no frame is larger (a full index rebuild travels as many upsert frames of one batch each)
MAX_FRAME = 256 << 20
SECRET_BYTES = 32
_LEN = struct.Struct(">I")


def encode(obj: Any) -> bytes:
    body = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _LEN.pack(len(body)) + body


async def read(reader: asyncio.StreamReader) -> Any:
    """The next frame; ``asyncio.IncompleteReadError`` at the end of the stream."""
    (size,) = _LEN.unpack(await reader.readexactly(_LEN.size))
    if size > MAX_FRAME:
        raise ValueError(f"frame of {size} bytes, the limit is {MAX_FRAME}")
    return pickle.loads(await reader.readexactly(size))  # noqa: S301 - our own child, see above
