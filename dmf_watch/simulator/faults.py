"""Fault injection for the MFDS simulator: the ways the real portal and a moving list can hurt a load.

A `Faults` value is chosen per run and parsed from a short spec string so that a test, the demo
and `dmf sim serve` (steered from another shell) all describe failures the same way::

    http500:2,http503:1,http429:1@retry_after=1,slow:0.5@times=2,drop:1,xml_code:30,
    truncate_last_page,total_count_shift:3,duplicate_across_pages,duplicate_shifting,
    empty_page:3,items_shape:single,camelcase_keys,extra_key:remark,
    permit_no_separator:_,null_field:BIZRNO,oversized_page

Transient faults (http500, http503, http429, drop, and slow/xml_code when given `@times=n`) fire
the given number of times and then stop, so a client that retries succeeds. Everything else is
permanent: it shapes every answer for as long as it is set.

- ``http500:n`` / ``http503:n``  the next n API requests answer that HTTP status.
- ``http429:n@retry_after=s``   the next n requests answer 429 with ``Retry-After: s``.
- ``slow:s[@times=n]``          each (or the next n) answers waits s seconds first.
- ``drop:n``                     the next n requests are cut off without any answer.
- ``gzip_bomb[:MiB]``             every list answer is sent gzip-compressed (``Content-Encoding:
                                 gzip``) and padded with spaces after its JSON until it expands
                                 to MiB mebibytes (default 2048): about 1 KiB on the wire per MiB,
                                 so a client that reads a body whole holds GiBs. The simulator
                                 counts the compressed bytes it got onto the wire
                                 (`SimulatorServer.bomb_bytes`), to show a client stopped early.
- ``drip:s``                     every answer's body is sent one byte every s seconds (a server
                                 that never stalls long enough for a read timeout).
- ``xml_code:c[@times=n]``       answer the portal's HTTP-200 XML error body with code c.
- ``truncate_last_page[:k]``     the last page lacks its last k items (default: half of them).
- ``total_count_shift[:d]``      pages after the first report totalCount + d (default 3).
- ``total_count_scale:k``        every page reports k times the real totalCount (the items stay
                                 real): a client that pages by the count would ask for k times
                                 the pages.
- ``duplicate_across_pages``     one record really is in the list twice (stable repeat).
- ``duplicate_shifting``         a new record is inserted at the top after every page 1 (and the
                                 last one falls off), so a paging client sees one record twice
                                 and misses another, differently on each pass.
- ``list_moves:k[@times=n]``      the list moves while it is paged: after each of the first n
                                 (default 1) page-1 answers, the pages after it are cut from a
                                 moved list, totalCount unchanged. k = ``withdraw``: a record of
                                 page 1 leaves the list and a new registration is added at the end;
                                 k = ``to_end``: a record of page 1 is edited and moved to the end.
                                 Either way a paging client misses one record and sees another.
- ``repeat_first:k``             the last page ends with the first k records of page 1 in place of
                                 its own last k (a server repeating records): the count is right,
                                 k records are listed twice and k never.
- ``empty_page:p``               page p answers no items although the count says otherwise.
- ``items_shape:s``              how `items` is shaped: object (default, ``{"item": [...]}``),
                                 list (``[...]``), single (a one-item page as a bare object,
                                 an empty page as ``""``), empty_string (empty pages as ``""``).
- ``camelcase_keys``             every item's keys renamed to camelCase (``DMF_PERMIT_NO`` ->
                                 ``dmfPermitNo``), values untouched: an API version that renamed
                                 its fields.
- ``extra_key[:name]``           the first item of every page carries one more key (default
                                 ``newField``) with a text value: an API that grew a field.

Faults that look complete (every page answers, the count is right, the data is wrong), for the
integrity gates that must catch what the loader cannot:

- ``item_shape:k``               some items drift below the gates: k = ``missing_key`` (every 7th
                                 item lacks MNFCTR_NAME), ``array`` (every 10th item's
                                 MANUF_COUNTRY_CODE_NM is a JSON array), ``datetime`` (every 20th
                                 DMF_PERMIT_DATE has a time part), ``empty_record`` (one more record
                                 with every field null, counted).
- ``permit_no_separator:c``      every registration number has its ``-`` replaced by c (a format
                                 change at the source: every identity by number breaks).
- ``null_field:F[+G...]``        field F (and G...) is null in every record (the API stopped
                                 sending it, or renamed it in a way the loader cannot see).
- ``permit_placeholder[:s]``     every registration without a number is sent with the number s
                                 (default ``-``; e.g. ``N/A``, ``없음``) instead of null.
- ``bad_text:k``                 one record that does not change today (the middle of the list)
                                 has its applicant sent as k = ``cp949`` (bytes that are not
                                 UTF-8; the JSON carries them as \\udcXX escapes) or ``surrogate``
                                 (a lone surrogate inside the name).
- ``permit_no_twice``            one registration that does not change today is listed on a second
                                 row right after its own, mid-update: same number, another
                                 manufacturer (two rows under one number; counted).
- ``oversized_page``             every page answers twice the rows asked (1,000 when 500 were
                                 asked, the list paged by 1,000): the positions the client gives
                                 page 2's records collide with page 1's, so the load is rejected
                                 and its raw rows must never reach staging.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, fields
from typing import Any

ITEMS_SHAPES = ("object", "list", "single", "empty_string")
LIST_MOVES = ("withdraw", "to_end")
ITEM_DRIFTS = ("missing_key", "array", "datetime", "empty_record")
BAD_TEXTS = ("cp949", "surrogate")


class FaultSpecError(ValueError):
    """A fault spec string that cannot be understood; the message says which part and why."""


@dataclass(frozen=True)
class Faults:
    """What goes wrong during one run of the simulator (all off by default)."""

    http500: int = 0
    http503: int = 0
    http429: int = 0
    retry_after_s: int = 1
    drop: int = 0
    slow_s: float = 0.0
    slow_times: int | None = None  # None: every answer is slow
    xml_code: str | None = None
    xml_code_times: int | None = None  # None: every answer is the error
    truncate_last_page: int | None = None  # None: off; 0: half the page; k: k items missing
    total_count_shift: int = 0
    duplicate_across_pages: bool = False
    duplicate_shifting: bool = False
    empty_page: int | None = None
    items_shape: str = "object"
    camelcase_keys: bool = False
    extra_key: str | None = None
    permit_no_separator: str | None = None
    null_fields: tuple[str, ...] = ()
    oversized_page: bool = False
    drip_s: float = 0.0
    total_count_scale: int = 1
    list_moves: str | None = None
    list_moves_times: int = 1
    repeat_first: int = 0
    item_shape: str | None = None
    gzip_bomb_mib: int = 0
    permit_placeholder: str | None = None
    bad_text: str | None = None
    permit_no_twice: bool = False

    @classmethod
    def parse(cls, spec: str | None) -> Faults:
        """Read a spec string such as ``"http500:2,truncate_last_page"``; empty means no faults."""
        values: dict[str, Any] = {}
        for raw in (spec or "").split(","):
            part = raw.strip()
            if not part:
                continue
            head, *options = part.split("@")
            name, _, arg = head.partition(":")
            name, arg = name.strip().lower(), arg.strip()
            opts = _options(part, options)
            try:
                _apply(values, name, arg, opts)
            except (TypeError, ValueError) as exc:
                raise FaultSpecError(f"fault {part!r} is not understood: {exc}") from None
        return cls(**values)

    def spec(self) -> str:
        """The spec string that parses back to this value (what `/_sim/state` shows)."""
        parts: list[str] = []
        if self.http500:
            parts.append(f"http500:{self.http500}")
        if self.http503:
            parts.append(f"http503:{self.http503}")
        if self.http429:
            parts.append(f"http429:{self.http429}@retry_after={self.retry_after_s}")
        if self.drop:
            parts.append(f"drop:{self.drop}")
        if self.slow_s:
            times = "" if self.slow_times is None else f"@times={self.slow_times}"
            parts.append(f"slow:{self.slow_s:g}{times}")
        if self.xml_code is not None:
            times = "" if self.xml_code_times is None else f"@times={self.xml_code_times}"
            parts.append(f"xml_code:{self.xml_code}{times}")
        if self.truncate_last_page is not None:
            parts.append(
                "truncate_last_page"
                if self.truncate_last_page == 0
                else f"truncate_last_page:{self.truncate_last_page}"
            )
        if self.total_count_shift:
            parts.append(f"total_count_shift:{self.total_count_shift}")
        if self.duplicate_across_pages:
            parts.append("duplicate_across_pages")
        if self.duplicate_shifting:
            parts.append("duplicate_shifting")
        if self.empty_page is not None:
            parts.append(f"empty_page:{self.empty_page}")
        if self.items_shape != "object":
            parts.append(f"items_shape:{self.items_shape}")
        if self.camelcase_keys:
            parts.append("camelcase_keys")
        if self.extra_key is not None:
            parts.append(f"extra_key:{self.extra_key}")
        if self.permit_no_separator is not None:
            parts.append(f"permit_no_separator:{self.permit_no_separator}")
        if self.null_fields:
            parts.append(f"null_field:{'+'.join(self.null_fields)}")
        if self.oversized_page:
            parts.append("oversized_page")
        if self.drip_s:
            parts.append(f"drip:{self.drip_s:g}")
        if self.total_count_scale != 1:
            parts.append(f"total_count_scale:{self.total_count_scale}")
        if self.list_moves is not None:
            parts.append(f"list_moves:{self.list_moves}@times={self.list_moves_times}")
        if self.repeat_first:
            parts.append(f"repeat_first:{self.repeat_first}")
        if self.item_shape is not None:
            parts.append(f"item_shape:{self.item_shape}")
        if self.gzip_bomb_mib:
            parts.append(f"gzip_bomb:{self.gzip_bomb_mib}")
        if self.permit_placeholder is not None:
            parts.append(f"permit_placeholder:{self.permit_placeholder}")
        if self.bad_text is not None:
            parts.append(f"bad_text:{self.bad_text}")
        if self.permit_no_twice:
            parts.append("permit_no_twice")
        return ",".join(parts)

    def reshape_item(self, item: dict[str, Any], position: int = 0) -> dict[str, Any]:
        """The record at `position` as served under the data faults (a copy; the registry is not
        touched)."""
        if (
            self.permit_no_separator is None
            and not self.null_fields
            and self.item_shape is None
            and self.permit_placeholder is None
        ):
            return item
        served = dict(item)
        if self.item_shape == "missing_key" and position % 7 == 3:
            served.pop("MNFCTR_NAME", None)
        elif self.item_shape == "array" and position % 10 == 4 and served.get("MANUF_COUNTRY_CODE_NM"):
            served["MANUF_COUNTRY_CODE_NM"] = served["MANUF_COUNTRY_CODE_NM"].split(",")
        elif self.item_shape == "datetime" and position % 20 == 5 and served.get("DMF_PERMIT_DATE"):
            served["DMF_PERMIT_DATE"] += " 00:00:00.0"
        if self.permit_no_separator is not None and served.get("DMF_PERMIT_NO"):
            served["DMF_PERMIT_NO"] = served["DMF_PERMIT_NO"].replace("-", self.permit_no_separator)
        if self.permit_placeholder is not None and served.get("DMF_PERMIT_NO") is None:
            served["DMF_PERMIT_NO"] = self.permit_placeholder
        for name in self.null_fields:
            if name in served:
                served[name] = None
        return served

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __bool__(self) -> bool:
        return self != Faults()


def _options(part: str, options: list[str]) -> dict[str, str]:
    opts: dict[str, str] = {}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep:
            raise FaultSpecError(f"fault {part!r}: option {option!r} must look like key=value")
        opts[key.strip().lower()] = value.strip()
    return opts


def _count(arg: str, default: int = 1) -> int:
    value = int(arg) if arg else default
    if value < 0:
        raise ValueError("the count cannot be negative")
    return value


def _times(opts: dict[str, str]) -> int | None:
    return _count(opts["times"]) if "times" in opts else None


def _apply(values: dict[str, Any], name: str, arg: str, opts: dict[str, str]) -> None:
    if name in ("http500", "http503", "drop"):
        values[name] = _count(arg)
    elif name == "http429":
        values["http429"] = _count(arg)
        if "retry_after" in opts:
            values["retry_after_s"] = _count(opts["retry_after"])
    elif name == "slow":
        values["slow_s"] = float(arg) if arg else 1.0
        values["slow_times"] = _times(opts)
    elif name == "drip":
        values["drip_s"] = float(arg) if arg else 1.0
    elif name == "total_count_scale":
        values["total_count_scale"] = _count(arg, default=1000)
        if values["total_count_scale"] < 1:
            raise ValueError("the scale is a whole number of 1 or more")
    elif name == "xml_code":
        if not arg.isdigit():
            raise ValueError("give the portal code, e.g. xml_code:30")
        values["xml_code"] = arg.zfill(2)
        values["xml_code_times"] = _times(opts)
    elif name == "truncate_last_page":
        values["truncate_last_page"] = _count(arg, default=0)
    elif name == "total_count_shift":
        values["total_count_shift"] = int(arg) if arg else 3
    elif name == "permit_placeholder":
        values["permit_placeholder"] = arg or "-"
    elif name == "bad_text":
        if arg not in BAD_TEXTS:
            raise ValueError(f"the text must be one of {', '.join(BAD_TEXTS)}")
        values["bad_text"] = arg
    elif name in (
        "duplicate_across_pages",
        "duplicate_shifting",
        "camelcase_keys",
        "oversized_page",
        "permit_no_twice",
    ):
        values[name] = True
    elif name == "list_moves":
        if arg not in LIST_MOVES:
            raise ValueError(f"the move must be one of {', '.join(LIST_MOVES)}")
        values["list_moves"] = arg
        values["list_moves_times"] = _times(opts) or 1
    elif name == "repeat_first":
        values["repeat_first"] = _count(arg, default=5)
    elif name == "item_shape":
        if arg not in ITEM_DRIFTS:
            raise ValueError(f"the drift must be one of {', '.join(ITEM_DRIFTS)}")
        values["item_shape"] = arg
    elif name == "gzip_bomb":
        values["gzip_bomb_mib"] = _count(arg, default=2048)
        if values["gzip_bomb_mib"] < 1:
            raise ValueError("give the expanded size in MiB, 1 or more, e.g. gzip_bomb:2048")
    elif name == "empty_page":
        values["empty_page"] = _count(arg)
        if values["empty_page"] < 1:
            raise ValueError("pages are numbered from 1")
    elif name == "extra_key":
        if arg and not arg.replace("_", "").isalnum():
            raise ValueError("the key name must be letters, digits or _")
        values["extra_key"] = arg or "newField"
    elif name == "items_shape":
        if arg not in ITEMS_SHAPES:
            raise ValueError(f"shape must be one of {', '.join(ITEMS_SHAPES)}")
        values["items_shape"] = arg
    elif name == "permit_no_separator":
        if len(arg) != 1 or arg == "-":
            raise ValueError("give one character other than '-', e.g. permit_no_separator:_")
        values["permit_no_separator"] = arg
    elif name == "null_field":
        names = tuple(part.strip().upper() for part in arg.split("+") if part.strip())
        if not names:
            raise ValueError("name the field, e.g. null_field:BIZRNO")
        values["null_fields"] = tuple(values.get("null_fields", ())) + names
    else:
        known = ", ".join(f.name for f in fields(Faults))
        raise ValueError(f"unknown fault {name!r} (known: {known})")


_MIB = 1 << 20
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # deflate, no name, no mtime, max compression


def gzip_bomb(body: bytes, mib: int) -> tuple[int, Iterator[bytes]]:
    """`body` gzip-compressed and padded with spaces (valid trailing JSON whitespace) until it expands
    to `mib` MiB more: the compressed length (for Content-Length) and the parts to send in order.

    Made without compressing GiBs: after a full flush, deflate writes the same bytes for the same
    input, so one compressed MiB of spaces is sent `mib` times; the CRC of the trailer is computed
    as the parts go out, so a client that reads it all gets a valid gzip stream."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = deflate.compress(body) + deflate.flush(zlib.Z_FULL_FLUSH)
    pad = b" " * _MIB
    block = deflate.compress(pad) + deflate.flush(zlib.Z_FULL_FLUSH)
    end = deflate.flush(zlib.Z_FINISH)
    length = len(_GZIP_HEADER) + len(head) + mib * len(block) + len(end) + 8

    def parts() -> Iterator[bytes]:
        crc = zlib.crc32(body)
        yield _GZIP_HEADER + head
        for _ in range(mib):
            crc = zlib.crc32(pad, crc)
            yield block
        yield end + struct.pack("<II", crc, (len(body) + mib * _MIB) & 0xFFFFFFFF)

    return length, parts()
