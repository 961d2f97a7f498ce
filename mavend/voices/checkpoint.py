"""Tensors out of a PyTorch checkpoint in the legacy (pre-1.6) format, without torch.

The format (torch/serialization.py, _legacy_load): four pickles in a row (a magic number,
the protocol version, the system info, then the object itself, whose tensors refer to
storages by key through pickle's persistent ids), a fifth pickle listing the storage keys
in file order, and then each storage's bytes: an 8-byte little-endian element count and the
raw elements. Only what a state dict of float tensors needs is understood; anything else
(code objects, other classes) is refused: every pickle in the file is read by an
unpickler that builds only the few types named, so a file cannot run code as it loads.
"""

from __future__ import annotations

import collections
import io
import pickle
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = 0x1950A86A20F9469CFC6C
PROTOCOL = 1001
_DTYPES = {"FloatStorage": np.float32, "DoubleStorage": np.float64,
           "HalfStorage": np.float16, "LongStorage": np.int64, "IntStorage": np.int32,
           "ByteStorage": np.uint8}


class CheckpointError(ValueError):
    """A file that is not a legacy checkpoint of plain tensors."""

    pass


@dataclass(frozen=True)
class _StorageType:
    dtype: type


@dataclass
class _Storage:
    dtype: type
    numel: int
    data: np.ndarray | None = None


@dataclass(frozen=True)
class _Tensor:
    storage: _Storage
    offset: int
    shape: tuple[int, ...]
    stride: tuple[int, ...]

    def array(self) -> np.ndarray:
        if self.storage.data is None:
            raise CheckpointError("a tensor's storage was never read")
        last = self.offset + sum((n - 1) * s for n, s in zip(self.shape, self.stride, strict=True))
        if min(self.shape, default=1) > 0 and (self.offset < 0 or min(self.stride, default=0) < 0
                                               or last >= len(self.storage.data)):
            raise CheckpointError("a tensor reaches past its storage")
        base = self.storage.data[self.offset:]
        itemsize = base.itemsize
        strides = tuple(s * itemsize for s in self.stride)
        return np.lib.stride_tricks.as_strided(base, self.shape, strides).copy()


def _rebuild_tensor_v2(storage, offset, size, stride, *_rest):
    return _Tensor(storage, int(offset), tuple(size), tuple(stride))


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, storages: dict[str, _Storage] | None = None):
        super().__init__(file)
        self._storages = storages

    def find_class(self, module: str, name: str):
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor_v2
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if module == "torch" and name in _DTYPES:
            return _StorageType(_DTYPES[name])
        raise CheckpointError(f"refusing to load {module}.{name} from a checkpoint")

    def persistent_load(self, saved_id):
        if self._storages is None:
            raise CheckpointError("a tensor where plain data was expected")
        kind, storage_type, key, _location, numel, *_view = saved_id
        if kind != "storage" or not isinstance(storage_type, _StorageType):
            raise CheckpointError(f"unknown persistent id {saved_id[:2]!r}")
        if key not in self._storages:
            self._storages[key] = _Storage(storage_type.dtype, int(numel))
        return self._storages[key]


def load_state_dict(path: Path, key: str | None = None) -> dict[str, np.ndarray]:
    """The float tensors of a legacy checkpoint as numpy arrays, by name (`key`: the
    entry holding the state dict, "model_state" in resemblyzer's)."""
    f = io.BytesIO(path.read_bytes())
    try:
        if _Unpickler(f).load() != MAGIC:
            raise CheckpointError(f"{path} is not a legacy PyTorch checkpoint")
        if _Unpickler(f).load() != PROTOCOL:
            raise CheckpointError(f"{path}: unknown checkpoint protocol")
        _Unpickler(f).load()  # system info: endianness, type sizes
        storages: dict[str, _Storage] = {}
        obj = _Unpickler(f, storages).load()
        keys = _Unpickler(f).load()
        for k in keys:
            (count,) = struct.unpack("<q", f.read(8))
            storage = storages[k]
            nbytes = count * np.dtype(storage.dtype).itemsize
            buffer = f.read(nbytes)
            if len(buffer) != nbytes:
                raise CheckpointError(f"{path}: truncated storage {k}")
            storage.data = np.frombuffer(buffer, dtype=storage.dtype)
        state = obj[key] if key is not None else obj
        return {name: t.array() for name, t in state.items() if isinstance(t, _Tensor)}
    except CheckpointError:
        raise
    except (pickle.UnpicklingError, EOFError, struct.error, KeyError, TypeError,
            AttributeError, ValueError) as exc:
        raise CheckpointError(f"{path}: {type(exc).__name__}: {exc}") from exc
