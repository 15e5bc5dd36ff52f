"""Whether a zstd stream ends where a frame ends. zstandard's streaming reader returns what it could
decompress and then nothing, whether the input was whole or cut short: a truncated `.zst` log read
as empty or partial, silently, where gzip and bz2 say so. `Frames` follows the frames' structure
in the compressed bytes as they pass (RFC 8878: each frame's header, its blocks' headers and sizes,
its checksum; skippable frames), at the cost of a few operations per block of up to 128 KB."""

ZSTD_MAGIC = 0xFD2FB528
SKIPPABLE = 0x184D2A50  # 0x184D2A50 to 0x184D2A5F: a frame of Frame_Size bytes to skip
_FCS_BYTES = (0, 2, 4, 8)  # Frame_Content_Size's bytes by its flag (0: 1 byte in a single segment)
_DICT_BYTES = (0, 1, 2, 4)


class Frames:
    """A reader of compressed bytes (`read(size)`) passed through, whose frames are followed:
    `whole()` tells whether what was read ends exactly at the end of a frame."""

    def __init__(self, stream):
        self.stream = stream
        self.need, self.step = 4, self._magic  # bytes the next step reads, and that step
        self.pending = bytearray()
        self.skip = 0  # bytes of a block's content (or a skippable frame) to pass over
        self.frames = 0
        self.checksum = False

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        self._feed(data)
        return data

    def whole(self) -> bool:
        """Whether the bytes read so far end where a frame ends (and hold one at least)."""
        return self.frames > 0 and self.step == self._magic and not self.pending and not self.skip

    def _feed(self, data: bytes) -> None:
        at = 0
        while at < len(data):
            if self.skip:
                taken = min(self.skip, len(data) - at)
                self.skip -= taken
                at += taken
                continue
            taken = min(self.need - len(self.pending), len(data) - at)
            self.pending += data[at:at + taken]
            at += taken
            if len(self.pending) == self.need:
                field, self.pending = bytes(self.pending), bytearray()
                self.step(int.from_bytes(field, "little"))

    def _magic(self, magic: int) -> None:
        if magic == ZSTD_MAGIC:
            self.need, self.step = 1, self._descriptor
        elif magic & 0xFFFFFFF0 == SKIPPABLE:
            self.need, self.step = 4, self._skippable
        else:  # not zstd: the decompressor says so
            self.need, self.step = 1 << 40, self._magic

    def _skippable(self, size: int) -> None:
        self.skip, self.need, self.step = size, 4, self._magic
        self.frames += 1

    def _descriptor(self, byte: int) -> None:
        single = bool(byte & 0x20)
        self.checksum = bool(byte & 0x04)
        fcs = _FCS_BYTES[byte >> 6] or (1 if single else 0)
        rest = (0 if single else 1) + _DICT_BYTES[byte & 0x03] + fcs
        self.need, self.step = (rest, self._header_rest) if rest else (3, self._block)

    def _header_rest(self, _: int) -> None:
        self.need, self.step = 3, self._block

    def _block(self, header: int) -> None:
        last, kind, size = header & 1, (header >> 1) & 3, header >> 3
        self.skip = 1 if kind == 1 else size  # RLE: one byte repeated; raw and compressed: `size` bytes
        if not last:
            self.need, self.step = 3, self._block
        elif self.checksum:
            self.need, self.step = 4, self._end
        else:
            self._end(0)

    def _end(self, _: int) -> None:
        self.need, self.step = 4, self._magic
        self.frames += 1
