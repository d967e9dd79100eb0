"""The methods a user would pick instead of our recipes, for `spotforge bench --method`: each
applied to the plain diffusers pipeline object for one call and removed after it. They are
bench extras (`pip install -e '.[bench]'`), never runtime dependencies.

- `deepcache:N`: the DeepCache package (Ma et al., 2023; PyPI `DeepCache`) on a UNet, the
  deep features reused for N steps out of N.
- `tomesd:R`: token merging for Stable Diffusion (Bolya and Hoffman, 2023; PyPI `tomesd`),
  merging a share R of the tokens in every attention block, at every UNet level (our small
  UNets attend only below full resolution, where tomesd's default leaves them alone).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from engine.errors import ModelUnavailable


@dataclass(frozen=True)
class Peer:
    name: str
    value: float
    _apply: Callable[[object, float], Callable[[], None]]

    @contextmanager
    def applied(self, pipe) -> Iterator[None]:
        remove = self._apply(pipe, self.value)
        try:
            yield
        finally:
            remove()


def _deepcache(pipe, interval: float) -> Callable[[], None]:
    from DeepCache import DeepCacheSDHelper

    helper = DeepCacheSDHelper(pipe=pipe)
    helper.set_params(cache_interval=int(interval), cache_branch_id=0)
    helper.enable()
    return helper.disable


def _tomesd(pipe, ratio: float) -> Callable[[], None]:
    import tomesd

    tomesd.apply_patch(pipe, ratio=ratio, max_downsample=8)
    return lambda: tomesd.remove_patch(pipe)


PEERS = {"deepcache": (_deepcache, "DeepCache"), "tomesd": (_tomesd, "tomesd")}


def parse(spec: str) -> Peer:
    """`name:value`, e.g. `deepcache:3` or `tomesd:0.5`."""
    name, _, value = spec.partition(":")
    if name not in PEERS or not value:
        known = ", ".join(f"{n}:VALUE" for n in PEERS)
        raise ValueError(f"unknown method {spec!r}: a recipe, or a peer ({known})")
    apply, package = PEERS[name]
    try:
        __import__(package)
    except ImportError:
        raise ModelUnavailable(
            f"{spec} needs the {package} package: pip install -e '.[bench]'"
        ) from None
    return Peer(name, float(value), apply)
