"""Which addresses a URL fetch may reach: public ones, and what the user allowed.

A plan names URLs, and so does every page that redirects; fetching them must not
become a way into what only this machine or its network can reach: a local service, a
router's admin page, a cloud metadata endpoint (169.254.169.254).  So the fetcher
(:mod:`plankit.teddy.context.urls`) checks every address a host resolves to, at every
hop, before it connects, and then connects to that very address.  Refused are
loopback, private (10/8, 172.16/12, 192.168/16), shared (100.64/10), link-local,
unique-local (fc00::/7), site-local, unspecified, multicast and every other range
reserved for special use, also in IPv6 forms that carry an IPv4 address
(``::ffff:127.0.0.1``, 6to4 ``2002::/16``, NAT64 ``64:ff9b::/96``).

``.teddy/config.yaml`` lets chosen ones through::

    network:
      allow_hosts: [localhost, "*.corp.example"]   # these names may resolve anywhere
      allow_networks: ["10.0.0.0/8", "::1"]        # these addresses may be reached
"""

from __future__ import annotations

import contextlib
import ipaddress
from dataclasses import dataclass

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

CONFIG_HINT = "in .teddy/config.yaml"

_V4 = ipaddress.IPv4Network
_PRIVATE = (_V4("10.0.0.0/8"), _V4("172.16.0.0/12"), _V4("192.168.0.0/16"))
_SHARED = _V4("100.64.0.0/10")
_THIS_NETWORK = _V4("0.0.0.0/8")
_UNIQUE_LOCAL = ipaddress.IPv6Network("fc00::/7")
_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))
_METADATA = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)


def embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (IPv4-mapped, 6to4, NAT64), if any."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if any(address in net for net in _NAT64):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_kind(address: Address) -> str | None:
    """Why ``address`` is not public (``"a loopback address"`` …); None when it is."""
    inner = embedded_ipv4(address)
    if inner is not None:
        kind = address_kind(inner)
        return f"{kind} ({inner} in IPv6 form)" if kind else None
    if address.is_unspecified or address in _THIS_NETWORK:
        return "an unspecified address"
    if address.is_loopback:
        return "a loopback address"
    if address in _METADATA:
        return "a cloud metadata address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if isinstance(address, ipaddress.IPv4Address):
        if any(address in net for net in _PRIVATE):
            return "a private address"
        if address in _SHARED:
            return "a shared address (carrier-grade NAT)"
    else:
        if address in _UNIQUE_LOCAL:
            return "a unique-local address"
        if address.is_site_local:
            return "a site-local address"
    if address.is_reserved or not address.is_global:
        return "an address reserved for special use"
    return None


def _host_matches(host: str, rule: str) -> bool:
    if rule.startswith("*."):
        return host.endswith(rule[1:])
    return host == rule


@dataclass(frozen=True, slots=True)
class NetworkPolicy:
    """What a fetch may reach beyond public addresses (nothing, by default)."""

    allow_hosts: tuple[str, ...] = ()
    """Host names (lower case; ``*.example.com`` for its subdomains) whose addresses are
    not checked."""
    allow_networks: tuple[Network, ...] = ()
    """Address ranges that may be reached."""

    @classmethod
    def from_settings(cls, hosts: tuple[str, ...], networks: tuple[str, ...]) -> NetworkPolicy:
        """The policy of ``network.allow_hosts`` and ``network.allow_networks`` (as
        :func:`check_hosts` and :func:`check_networks` returned them)."""
        return cls(hosts, tuple(ipaddress.ip_network(net) for net in networks))

    def host_allowed(self, host: str) -> bool:
        """Whether ``host`` is named by ``allow_hosts``."""
        host = host.lower().rstrip(".")
        return any(_host_matches(host, rule) for rule in self.allow_hosts)

    def refusal(self, address: str) -> str | None:
        """Why ``address`` may not be reached (``"a loopback address"``), or None."""
        try:
            ip = ipaddress.ip_address(address.partition("%")[0])
        except ValueError:
            return "not an IP address"
        kind = address_kind(ip)
        if kind is None:
            return None
        inner = embedded_ipv4(ip)
        for net in self.allow_networks:
            if ip in net or (inner is not None and inner in net):
                return None
        return kind


# --- checking the settings --------------------------------------------------------------


def _items(key: str, value: object) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"'{key}' must be a list of strings, not {value!r}")
    return [v.strip() for v in value]


def check_hosts(key: str, value: object) -> tuple[str, ...]:
    """``network.allow_hosts`` as a tuple of lower-case names; ValueError saying what is
    wrong with it."""
    hosts = []
    for item in _items(key, value):
        host = item.lower().rstrip(".")
        if "://" in host or "/" in host:
            raise ValueError(
                f"'{key}' takes host names, not URLs or paths: '{item}'"
                f" (write it as '{host.split('://')[-1].split('/')[0]}')"
            )
        name = host.removeprefix("*.")
        if not name or "*" in name or any(c.isspace() for c in name):
            raise ValueError(
                f"'{key}': '{item}' is not a host name (a name, or '*.' and a domain"
                " for its subdomains)"
            )
        hosts.append(host)
    return tuple(hosts)


def check_networks(key: str, value: object) -> tuple[str, ...]:
    """``network.allow_networks`` as a tuple of networks in normal form (``10.0.0.0/8``;
    a lone address is its own network); ValueError saying what is wrong with it."""
    networks = []
    for item in _items(key, value):
        try:
            networks.append(str(ipaddress.ip_network(item)))
        except ValueError as exc:
            hint = ""
            with contextlib.suppress(ValueError):
                hint = f"; did you mean {ipaddress.ip_network(item, strict=False)}?"
            raise ValueError(
                f"'{key}': '{item}' is not an address or network ({exc}){hint}"
            ) from None
    return tuple(networks)
