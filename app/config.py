"""One settings object for the whole app, read from SPOTFORGE_* environment variables.

Defaults are embedded so that `make run` works on a fresh machine: an SQLite file
and an asset folder under ./var.
"""

from functools import cached_property
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from engine.presets import DEFAULT_PRESET


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SPOTFORGE_", env_file=".env", extra="ignore")

    data_dir: Path = Field(Path("var"), description="Root of everything the app writes.")
    database_url: str | None = Field(
        None, description="SQLAlchemy URL; default: an SQLite file in data_dir."
    )
    asset_dir: Path | None = Field(None, description="Asset store root; default: data_dir/assets.")
    max_asset_bytes: int = Field(512 * 1024 * 1024, gt=0, description="Largest accepted upload.")
    web_dir: Path | None = Field(
        None,
        description="Uploads and per-session response files the pages are served; "
        "default data_dir/web. Emptied when the app starts.",
    )
    model_dir: Path | None = Field(
        None, description="Pulled model weights; default data_dir/models."
    )
    model: str = Field(
        DEFAULT_PRESET,
        description="Model preset id (or a saved pipeline's folder) to generate with.",
    )
    device: str | None = Field(None, description="cuda, mps or cpu; default: the best available.")
    dtype: str | None = Field(None, description="float32, float16 or bfloat16; default per preset.")
    segmentation_model: Path | None = Field(
        None, description="A u2net-family ONNX file; default: the bundled u2netp."
    )
    compile: bool = Field(
        False, description="Regional torch.compile of the denoiser's repeated blocks (GPUs)."
    )
    cuda_graphs: bool = Field(
        False, description="Denoiser calls on a GPU replayed from CUDA graphs, fused norms inside."
    )
    engine_max_batch: int = Field(4, ge=1, description="Largest batch of compatible requests.")
    engine_max_queued: int = Field(64, ge=1, description="Requests waiting before submit refuses.")
    max_waiting_renders: int = Field(
        16,
        ge=1,
        description="Previews and finals waiting, of all businesses, before more are "
        "answered 'busy'.",
    )
    max_waiting_jobs: int = Field(
        20_000, ge=1, description="Jobs one business may have waiting before new work is refused."
    )
    workers: int = Field(
        0,
        ge=0,
        description="Engine workers in a Ray pool, each with its own engine (a GPU each, or "
        "one CPU thread each); 0: one worker thread in the process.",
    )
    ray_address: str | None = Field(
        None, description="The Ray cluster of the pool (e.g. ray://head:10001); default: local."
    )
    signing_key: Path | None = Field(
        None,
        description="PEM private key that signs every final's C2PA manifest; with "
        "signing_cert. Default: a development CA and signer made once in data_dir/signing.",
    )
    signing_cert: Path | None = Field(
        None, description="PEM certificate chain of signing_key, the signer's first."
    )
    host: str = "127.0.0.1"
    port: int = Field(7860, ge=1, le=65535)

    @cached_property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'spotforge.db').resolve()}"

    @cached_property
    def resolved_model_dir(self) -> Path:
        return (self.model_dir or self.data_dir / "models").resolve()

    @cached_property
    def resolved_web_dir(self) -> Path:
        return (self.web_dir or self.data_dir / "web").resolve()

    @cached_property
    def resolved_signing_dir(self) -> Path:
        """Where the development signing key lives: never served, never an asset."""
        return (self.data_dir / "signing").resolve()

    @cached_property
    def resolved_asset_dir(self) -> Path:
        return (self.asset_dir or self.data_dir / "assets").resolve()
