"""Which API base URLs the loader may connect to, decided before any connection is made.

Why: the service key travels in the query string, so a plain-http URL, a cloud-metadata
address or a look-alike host on the company network would receive it. Only https reaches the
API; plain http is allowed on loopback alone (the simulator). Link-local and metadata
addresses are never a target; private ranges only when `MFDS_API_ALLOWED_HOSTS` names them on
purpose (a company mirror or proxy of the API). Credentials inside the URL are refused and
never repeated: every message shows the URL through `display_url`.

Host names are judged as written (no DNS lookup here): numeric forms such as `2852039166` or
`0xa9.0xfe.0xa9.0xfe`, which the resolver would turn into an address, are judged as that address.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "metadata.goog", "instance-data"})
METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),
        ipaddress.ip_address("169.254.170.2"),
        ipaddress.ip_address("fd00:ec2::254"),
        ipaddress.ip_address("100.100.100.200"),
    }
)
PRIVATE_NETWORKS = tuple(
    ipaddress.ip_network(net)
    for net in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "fc00::/7",
    )
)
_NUMERIC_HOST = re.compile(r"^(0x[0-9a-f]+|[0-9]+)(\.(0x[0-9a-f]+|[0-9]+)){0,3}$", re.IGNORECASE)


def display_url(url: str) -> str:
    """The URL as it may be shown or stored: no user, password, query or fragment."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return url.split("?", 1)[0].split("#", 1)[0].rsplit("@", 1)[-1]
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else url.split("?", 1)[0].rsplit("@", 1)[-1]


def host_address(host: str) -> IPAddress | None:
    """The address a host literal stands for, including the resolver's legacy numeric forms."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        if not _NUMERIC_HOST.match(host):
            return None
        try:  # inet_aton is what the resolver applies to '2852039166' or '0251.0376.0251.0376'
            address = ipaddress.ip_address(socket.inet_aton(host))
        except OSError:
            return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_loopback_host(host: str) -> bool:
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    address = host_address(host)
    return address is not None and address.is_loopback


def _allowed(host: str, address: IPAddress | None, allowed_hosts: Iterable[str]) -> bool:
    for entry in allowed_hosts:
        entry = entry.strip().lower()
        if not entry:
            continue
        if entry == host:
            return True
        if address is not None:
            try:
                if address in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                continue
    return False


def base_url_problem(url: str, allowed_hosts: Iterable[str] = ()) -> str | None:
    """Why the loader must not connect to `url`, in one sentence; None when it may."""
    shown = display_url(url)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return f"MFDS_API_BASE_URL ({shown}) is not a valid URL"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"MFDS_API_BASE_URL ({shown}) is not an http(s) URL with a host"
    if parts.username is not None or parts.password is not None:
        return (
            f"MFDS_API_BASE_URL contains a user name or password ({shown}); credentials in "
            "the URL are refused because the URL is logged and stored: remove them"
        )
    host = parts.hostname.lower().rstrip(".")
    if is_loopback_host(host):
        return None
    address = host_address(host)
    if host in METADATA_HOSTS or (address is not None and address in METADATA_ADDRESSES):
        return f"MFDS_API_BASE_URL points at a cloud metadata address ({host}); it is never a target"
    if address is not None and address.is_link_local:
        return f"MFDS_API_BASE_URL points at a link-local address ({host}); it is never a target"
    if address is not None and (address.is_unspecified or address.is_multicast or address.is_reserved):
        return f"MFDS_API_BASE_URL points at {host}, which is not a server address"
    if (
        address is not None
        and any(address in net for net in PRIVATE_NETWORKS)
        and not _allowed(host, address, allowed_hosts)
    ):
        return (
            f"MFDS_API_BASE_URL points at the private address {host}; if it is your company's "
            "mirror or proxy of the API, name it in MFDS_API_ALLOWED_HOSTS"
        )
    if parts.scheme != "https":
        return (
            f"MFDS_API_BASE_URL ({shown}) is plain http; the service key travels in the URL, "
            "so only https is used (plain http only on loopback, for the simulator)"
        )
    return None
