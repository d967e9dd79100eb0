"""The `spotforge` command: serve the app, manage the database, script the use cases."""

from __future__ import annotations

from pathlib import Path

import typer

from app.config import Settings
from engine.presets import DEFAULT_PRESET  # data only, as app.config takes it
from storage import Database, migrate
from templates.qc_specs import SPECS  # data only: the qc command's help lists the names

cli = typer.Typer(
    help="Spotforge: broadcast-ready TV spots for small businesses.", no_args_is_help=True
)
db_cli = typer.Typer(help="Database schema (Alembic migrations).", no_args_is_help=True)
business_cli = typer.Typer(help="Businesses (tenants).", no_args_is_help=True)
campaign_cli = typer.Typer(help="Campaigns of one business.", no_args_is_help=True)
spot_cli = typer.Typer(help="Spots: a campaign's creative, from a brief.", no_args_is_help=True)
models_cli = typer.Typer(help="Model presets: list them, pull hub weights.", no_args_is_help=True)
picture_cli = typer.Typer(
    help="Your pictures: photos and clips to set a spot or a place in.", no_args_is_help=True
)
order_cli = typer.Typer(
    help="Orders: quote variants in shapes for destinations, approve, fetch the package.",
    no_args_is_help=True,
)
cli.add_typer(db_cli, name="db")
cli.add_typer(business_cli, name="business")
cli.add_typer(campaign_cli, name="campaign")
cli.add_typer(spot_cli, name="spot")
cli.add_typer(models_cli, name="models")
cli.add_typer(picture_cli, name="picture")
cli.add_typer(order_cli, name="order")


def _context():
    from app.services import AppContext

    return AppContext.open(Settings())


def _fail(message: str) -> typer.Exit:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(1)


@cli.command()
def serve(
    host: str = typer.Option(None, help="Interface to bind (default from settings)."),
    port: int = typer.Option(None, help="Port (default from settings)."),
    worker: bool = typer.Option(
        True, help="--no-worker leaves the job queue to other servers' workers or pools."
    ),
) -> None:
    """Upgrade the database and serve the web app (its worker makes what the pages ask for)."""
    from app.ui.server import serve as serve_web

    ctx = _context()
    if host:
        ctx.settings.host = host
    if port:
        ctx.settings.port = port
    typer.echo(f"Spotforge on http://{ctx.settings.host}:{ctx.settings.port}")
    serve_web(ctx, worker=worker)


@db_cli.command("upgrade")
def db_upgrade(revision: str = typer.Argument("head")) -> None:
    """Apply migrations up to REVISION."""
    Database(Settings().resolved_database_url).upgrade(revision)
    typer.echo(f"database at {_current()}")


@db_cli.command("downgrade")
def db_downgrade(revision: str = typer.Argument(..., help="Target, e.g. -1 or base.")) -> None:
    """Revert migrations down to REVISION."""
    migrate.downgrade(Database(Settings().resolved_database_url).engine, revision)
    typer.echo(f"database at {_current()}")


@db_cli.command("current")
def db_current() -> None:
    """Print the database's revision and the newest one available."""
    typer.echo(f"database at {_current()}; newest revision {migrate.head()}")


@db_cli.command("revision")
def db_revision(message: str = typer.Option(..., "-m", help="What the change is.")) -> None:
    """Write a migration for the difference between the models and the database (at head)."""
    migrate.revision(Database(Settings().resolved_database_url).engine, message)


def _current() -> str:
    return migrate.current(Database(Settings().resolved_database_url).engine) or "base (empty)"


@business_cli.command("create")
def business_create(name: str) -> None:
    """Create a business and print its id."""
    from app.services import USER_ERRORS, businesses

    try:
        business = businesses.create(_context(), name)
    except USER_ERRORS as exc:
        raise _fail(str(exc)) from exc
    typer.echo(f"{business.id}\t{business.name}")


@business_cli.command("list")
def business_list() -> None:
    from app.services import businesses

    for business in businesses.list_all(_context()):
        typer.echo(f"{business.id}\t{business.name}")


@campaign_cli.command("create")
def campaign_create(
    name: str,
    business: int = typer.Option(..., "--business", "-b", help="Business id."),
    objective: str = typer.Option("", help="What the campaign should achieve."),
) -> None:
    """Create a campaign and print its id."""
    from app.services import USER_ERRORS, businesses

    try:
        campaign = businesses.create_campaign(_context(), business, name, objective)
    except USER_ERRORS as exc:
        raise _fail(str(exc)) from exc
    typer.echo(f"{campaign.id}\t{campaign.name}")


@spot_cli.command("create")
def spot_create(
    business: int = typer.Option(..., "--business", "-b", help="Business id."),
    campaign: str = typer.Option(..., "--campaign", help="The new campaign's name."),
    template: str = typer.Option("product-hero", help="Template id (see `spotforge templates`)."),
    brief: Path = typer.Option(
        ...,
        help="JSON: the copy, optionally objective, colors, voiceover, music, music_file, "
        'background ({"file": photo or clip, or "asset": one of your pictures; "focus": [x, y]}).',
    ),
    photo: list[Path] = typer.Option(..., help="Product photo; repeat for more."),
    logo: Path = typer.Option(None, help="Logo image."),
    heading_font: Path = typer.Option(None, help="Heading font (TTF/OTF)."),
    body_font: Path = typer.Option(None, help="Body font (TTF/OTF)."),
) -> None:
    """Create a campaign's spot from a brief, as the page's Brief step does, and print JSON
    with its "spot_id" (for `spotforge bulk --spot`)."""
    import json

    from app.services import USER_ERRORS, spots

    try:
        given = json.loads(brief.read_text())
    except (OSError, ValueError) as exc:
        raise _fail(f"cannot read the brief {brief}: {exc}") from exc
    track = given.pop("music_file", None) if isinstance(given, dict) else None
    if track is not None and not isinstance(track, str):
        raise _fail('the brief\'s "music_file" is the path of an audio file')
    music_file = None if track is None else brief.parent / track  # beside the brief, if relative
    setting = given.get("background") if isinstance(given, dict) else None
    picture = setting.get("file") if isinstance(setting, dict) else None
    if picture is not None and not isinstance(picture, str):
        raise _fail('the brief\'s "background" "file" is the path of a photo or clip')
    background_file = None if picture is None else brief.parent / picture
    for path in [*photo, logo, heading_font, body_font, music_file, background_file]:
        if path is not None and not path.is_file():
            raise _fail(f"no such file: {path}")
    try:
        form = spots.brief_form(campaign, template, given, photo, logo=logo,
                                heading_font=heading_font, body_font=body_font,
                                music_file=music_file, background_file=background_file)  # fmt: skip
        made = spots.create_spot(_context(), business, form)
    except USER_ERRORS as exc:
        raise _fail(str(exc)) from exc
    for note in made.notes:  # what of the brief this template leaves off the screen
        typer.secho(f"note: {note}", fg=typer.colors.YELLOW, err=True)
    typer.echo(json.dumps({"spot_id": made.id, "campaign_id": made.campaign_id,
                           "template": made.template_id, "duration_s": made.duration,
                           "notes": list(made.notes)}))  # fmt: skip


@picture_cli.command("add")
def picture_add(
    file: Path,
    business: int = typer.Option(..., "--business", "-b", help="Business id."),
    geography: str = typer.Option(
        None, help="Set this place's variants in it (the place's name in your library)."
    ),
    focus: str = typer.Option(
        None, help='Where it is cropped around: "x,y" (0 to 1 each) or e.g. "bottom left".'
    ),
) -> None:
    """Add a photo (JPEG, PNG, WebP) or clip (MP4, MOV) to your pictures; print its "asset"
    (for a brief's "background") as JSON."""
    import json

    from app.services import USER_ERRORS, library, pictures

    if not file.is_file():
        raise _fail(f"no such file: {file}")
    try:
        point = pictures.focus_of(
            focus if focus is None or "," not in focus else json.loads(f"[{focus}]")
        )
        added = pictures.upload(_context(), business, file)
        if geography is not None:
            library.set_geography_background(
                _context(), business, geography, pictures.Backdrop(added.asset_id, point)
            )
    except (*USER_ERRORS, ValueError) as exc:
        raise _fail(str(exc)) from exc
    typer.echo(json.dumps({"asset": added.asset_id, "name": added.name, "kind": added.kind}))


@picture_cli.command("list")
def picture_list(
    business: int = typer.Option(..., "--business", "-b", help="Business id."),
) -> None:
    from app.services import USER_ERRORS, pictures

    try:
        for p in pictures.pictures(_context(), business):
            typer.echo(f"{p.asset_id}\t{p.caption}")
    except USER_ERRORS as exc:
        raise _fail(str(exc)) from exc


@campaign_cli.command("list")
def campaign_list(
    business: int = typer.Option(..., "--business", "-b", help="Business id."),
) -> None:
    from app.services import USER_ERRORS, businesses

    try:
        campaigns = businesses.list_campaigns(_context(), business)
    except USER_ERRORS as exc:
        raise _fail(str(exc)) from exc
    for c in campaigns:
        typer.echo(f"{c.id}\t{c.status}\t{c.name}\t{c.objective}")


@cli.command()
def generate(
    prompt: str = typer.Option(..., help="What to draw."),
    preset: str = typer.Option(
        None, help="Model preset id, or a saved pipeline's folder; default: SPOTFORGE_MODEL."
    ),
    task: str = typer.Option(
        "text-to-image",
        help="text-to-image, image-to-image, inpaint, text-to-video, image-to-video or "
        "reference-to-video.",
    ),
    image: Path = typer.Option(None, help="Input image (image-to-image, inpaint, *-to-video)."),
    mask: Path = typer.Option(None, help="Inpaint mask: white is repainted."),
    negative: str = typer.Option("", help="Negative prompt."),
    seed: int = typer.Option(0),
    steps: int = typer.Option(None, help="Default: the preset's."),
    guidance: float = typer.Option(None, help="Default: the preset's."),
    size: str = typer.Option(None, help="WIDTHxHEIGHT; default: the preset's."),
    frames: int = typer.Option(None, help="Clip length in frames (4k+1)."),
    strength: float = typer.Option(None, help="How far image-to-image/inpaint may move."),
    recipe: str = typer.Option("exact"),
    out: Path = typer.Option(..., "-o", "--out", help="Output file (.png, or .mp4 for clips)."),
) -> None:
    """Run one request through the engine and write the result; prints its parameters."""
    import json

    from PIL import Image

    from app.services.context import open_engine
    from engine import REQUEST_TYPES, EngineError, Task
    from engine.media import save_result

    settings = Settings()
    try:
        kind = Task(task)
    except ValueError:
        raise _fail(f"unknown task {task!r}; one of: {', '.join(Task)}") from None
    fields: dict = dict(
        preset=preset or settings.model,
        prompt=prompt,
        negative_prompt=negative,
        seed=seed,
        steps=steps,
        guidance=guidance,
        recipe=recipe,
    )
    if size:
        fields["width"], fields["height"] = _size(size)
    if kind.is_video and frames:
        fields["num_frames"] = frames
    if strength is not None:
        fields["strength"] = strength
    needs = {
        Task.IMAGE_TO_IMAGE: ["image"],
        Task.INPAINT: ["image", "mask"],
        Task.IMAGE_TO_VIDEO: ["image"],
        Task.REFERENCE_TO_VIDEO: ["reference"],
    }.get(kind, [])
    given = {"image": image, "mask": mask, "reference": image}
    for name in needs:
        if given[name] is None:
            raise _fail(f"{kind.value} needs --{'mask' if name == 'mask' else 'image'}")
        try:
            fields[name] = Image.open(given[name])
            fields[name].load()
        except OSError as exc:
            raise _fail(f"cannot read {given[name]}: {exc}") from exc
    try:
        request = REQUEST_TYPES[kind](**fields)
        with open_engine(settings) as engine:
            result = engine.generate(request)
        paths = save_result(result.images, result.fps, out)
    except (EngineError, TypeError) as exc:
        raise _fail(str(exc)) from exc
    for warning in result.warnings:
        typer.secho(f"warning: {warning}", fg=typer.colors.YELLOW, err=True)
    typer.echo(
        json.dumps(
            {
                "files": [str(p) for p in paths],
                "params": result.params,
                "timings": result.timings,
                "warnings": list(result.warnings),
            },
            indent=2,
            default=str,
        )
    )


@cli.command()
def bench(
    preset: str = typer.Option(DEFAULT_PRESET, help="Default: the default offline model."),
    task: str = typer.Option("text-to-image"),
    method: list[str] = typer.Option(
        ["balanced"], help="A recipe, or a peer: deepcache:N, tomesd:R (repeat for several)."
    ),
    steps: int = typer.Option(None),
    size: str = typer.Option(None, help="WIDTHxHEIGHT"),
    prompt: list[str] = typer.Option(None, help="Default: four held out from tuning."),
    seed: list[int] = typer.Option(None, help="Default: 101, 202, 303."),
    suite: str = typer.Option(
        None, help="cpu or gpu: every recipe on the suite's presets, one JSON line each."
    ),
    budget_s: float = typer.Option(3000, help="With --suite: stop starting runs after this."),
    shifted_patches: bool = typer.Option(
        False,
        help="Draw a model meant for it with shifted patches, baseline and recipe alike "
        "(as the product does; not with peers). Default: plain diffusers' sampling.",
    ),
    markdown_out: Path = typer.Option(None, "--markdown", help="Also write a markdown table."),
) -> None:
    """Plain diffusers against each method on every prompt x seed (adjacent pairs): one JSON
    line per method, with the speedup's median and range and the mean and worst fidelity."""
    import json

    from engine import EngineError, Task
    from engine.bench import HELD_OUT_PROMPTS, HELD_OUT_SEEDS, SUITES, markdown, methods
    from engine.bench import suite as run_suite

    settings = Settings()
    where = {"model_dir": settings.resolved_model_dir, "device": settings.device,
             "cuda_graphs": settings.cuda_graphs, "shifted_patches": shifted_patches}  # fmt: skip
    cases = {"prompts": prompt or HELD_OUT_PROMPTS, "seeds": seed or HELD_OUT_SEEDS}
    if suite is not None:
        if suite not in SUITES:
            raise _fail(f"unknown suite {suite!r}; one of: {', '.join(SUITES)}")
        measured = run_suite(suite, budget_s=budget_s, **where, **cases)
    else:
        options = {"steps": steps, "size": _size(size) if size else None, **where, **cases}
        measured = methods(preset, Task(task), method, **options)
    rows = []
    try:
        for row in measured:  # each printed as it is measured: a long run keeps what it did
            rows.append(row)
            typer.echo(json.dumps(row))
    except (EngineError, ValueError) as exc:
        raise _fail(str(exc)) from exc
    finally:
        if markdown_out and rows:
            markdown_out.write_text(markdown(rows) + "\n")
    not_run = [row for row in rows if "note" in row]
    if suite is None and not_run:  # methods asked for by name: each one not run is an error
        raise _fail("; ".join(row["note"] for row in not_run))


@cli.command()
def train(
    model: str = typer.Option(
        "mini-sd",
        help="mini-sd (the UNet), mini-dit (the transformer), landmark-dit (model v2's 16:9 "
        "landmark scenes), landmark-decoder (landmark-dit's wider decoder, on its encoder), "
        "landmark-upscaler (landmark-dit's upscaler to 1920x1080) or shape-judge (the network "
        "that names a place from its shapes, for landmark-dit's card).",
    ),
    work: Path = typer.Option(
        None, help="Data cache, checkpoints and loss logs (var/train/MODEL); reruns resume."
    ),
    out: Path = typer.Option(
        None,
        help="Where the model goes (engine/weights/MODEL; the decoder and the upscaler: "
        "engine/weights/landmark-dit's vae and upscaler).",
    ),
    grid: Path = typer.Option(None, help="Sample grid to write (docs/MODEL-grid.png)."),
    base: Path = typer.Option(
        None,
        help="mini-dit: the mini-sd whose autoencoder it uses (engine/weights/mini-sd); "
        "landmark-decoder: the landmark-dit whose encoder it decodes, and "
        "landmark-upscaler: the landmark-dit whose pictures its card measures "
        "(both engine/weights/landmark-dit).",
    ),
    seed: int = typer.Option(0),
    threads: int = typer.Option(2, min=1, help="CPU threads (results depend on it)."),
    device: str = typer.Option(
        "cpu", help="landmark-dit and landmark-upscaler: cpu, or cuda for their GPU plans."
    ),
) -> None:
    """Train mini-sd (under 2 hours on 2 cores), mini-dit (about 1 hour, on mini-sd's
    autoencoder), landmark-dit (about 1.5 hours), landmark-decoder (about 15 minutes, after
    landmark-dit, whose card it re-measures), landmark-upscaler (about 40 minutes, with its card)
    or the shape judge (about 5 minutes) from the procedural scenes, then write the model card
    and sample grid (landmark-dit and its decoder: a contact sheet; the upscaler: a crop at
    1:1). Interrupted runs resume from their last checkpoint, except the shape judge's, which
    starts afresh."""
    import json

    from engine.presets import get_preset
    from engine.training.card import write_card
    from engine.training.train import Plan, train_dit
    from engine.training.train import train as train_sd

    models = ("mini-sd", "mini-dit", "landmark-dit", "landmark-decoder", "landmark-upscaler",
              "shape-judge")  # fmt: skip
    if model not in models:
        raise _fail(f"unknown model {model!r}: {', '.join(models[:-1])} or {models[-1]}")
    if device != "cpu" and model not in ("landmark-dit", "landmark-upscaler"):
        raise _fail(f"{model} trains on the CPU only; --device is for model v2's two stages")
    if device not in ("cpu", "cuda"):
        raise _fail(f"unknown device {device!r}: cpu or cuda")
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise _fail("--device cuda: this machine has no CUDA GPU that torch can use")
    work = work or Path("var/train") / model
    # The upscaler is part of landmark-dit's preset: its folder is inside landmark-dit's.
    default_out = {
        "landmark-upscaler": Path("engine/weights/landmark-dit/upscaler"),
        "landmark-decoder": Path("engine/weights/landmark-dit"),  # its vae/
    }
    out = out or default_out.get(model, Path("engine/weights") / model)
    command = f"spotforge train --model {model}" + (f" --seed {seed}" if seed else "")
    command += f" --device {device}" if device != "cpu" else ""
    if model == "shape-judge":
        import torch

        from engine.training.shape_judge import JudgePlan, ShapeJudge, write_judge_card

        torch.set_num_threads(threads)
        judge_plan = JudgePlan(seed=seed)
        judge, history = ShapeJudge.fit(judge_plan, log=typer.echo)
        judge.save(out)
        accuracy = write_judge_card(judge_plan, out, history, command)
        typer.echo(json.dumps({"out": str(out), "held_out": accuracy}))
        return
    if model == "landmark-decoder":
        from engine.training.landmark_card import refresh_evaluation
        from engine.training.landmark_decoder import DecoderPlan, train_decoder, write_decoder_card

        decoder_plan = DecoderPlan(seed=seed)
        try:
            found = train_decoder(decoder_plan, work, base or out, out, threads=threads)
        except ValueError as exc:
            raise _fail(str(exc)) from exc
        summary = write_decoder_card(decoder_plan, work, out, found, command)
        # landmark-dit's card measured its pictures through the decoder it was trained with.
        sheet = grid or Path("docs") / "landmark-dit-sheet.png"
        scores = refresh_evaluation(out, sheet)
        typer.echo(json.dumps({"out": str(out / "vae"), **summary, "recognised": scores}))
        return
    if model == "landmark-upscaler":
        from engine.training.train_upscaler import UpscalerPlan, train_upscaler
        from engine.training.upscaler_card import write_upscaler_card

        crop = grid or Path("docs") / f"{model}-crop.png"
        upscaler_plan = UpscalerPlan.for_device(device, seed)
        base = base or Path("engine/weights/landmark-dit")
        try:
            train_upscaler(upscaler_plan, work, out, threads=threads)
        except ValueError as exc:
            raise _fail(str(exc)) from exc
        lines = write_upscaler_card(upscaler_plan, work, out, base, crop, command, threads)
        typer.echo(json.dumps({"out": str(out), "crop": str(crop), "lines": lines}))
        return
    if model == "landmark-dit":
        from engine.training import landmark_dit
        from engine.training.landmark_card import write_landmark_card

        sheet = grid or Path("docs") / f"{model}-sheet.png"
        landmark_plan = landmark_dit.LandmarkPlan.for_device(device, seed)
        try:
            landmark_dit.train(landmark_plan, work, out, threads=threads)
        except ValueError as exc:
            raise _fail(str(exc)) from exc
        scores = write_landmark_card(landmark_plan, work, out, sheet, command)
        typer.echo(json.dumps({"out": str(out), "sheet": str(sheet), "recognised": scores}))
        return
    grid = grid or Path("docs") / f"{model}-grid.png"
    plan = Plan(seed=seed)
    try:
        if model == "mini-dit":
            train_dit(plan, work, out, base or Path("engine/weights/mini-sd"), threads=threads)
        else:
            train_sd(plan, work, out, threads=threads)
    except ValueError as exc:
        raise _fail(str(exc)) from exc
    accuracy = write_card(plan, work, out, grid, get_preset(model), command)
    typer.echo(json.dumps({"out": str(out), "grid": str(grid), "recognised": accuracy}))


@cli.command()
def scene(
    geography: str = typer.Option(..., "--geography", "-g", help="Geography name."),
    light: str = typer.Option("day", help="day, golden or night."),
    seed: int = typer.Option(0, help="The run's seed (bulk --seed)."),
    business: int = typer.Option(
        None, "--business", "-b", help="As this business's variants get it (its library)."
    ),
    out: Path = typer.Option(..., "-o", "--out", help="Output PNG."),
) -> None:
    """Write a place's background as a final shows it (1920x1080, before any overlay), made by
    the configured model."""
    from app.services import USER_ERRORS
    from app.services.context import open_engine
    from app.services.scene_look import scene as look

    settings = Settings()
    ctx = _context()
    try:
        with open_engine(settings) as engine:
            image = look(ctx, engine, geography, preset=settings.model, light=light, seed=seed,
                         business_id=business)  # fmt: skip
    except USER_ERRORS as exc:
        raise _fail(str(exc)) from exc
    image.save(out, format="PNG")
    typer.echo(str(out))


@models_cli.command("list")
def models_list() -> None:
    """Every preset: tasks, licence, whether it is on this machine, and its size."""
    from engine.loading import local_size
    from engine.presets import PRESETS

    model_dir = Settings().resolved_model_dir
    typer.echo(f"{'preset':22} {'here':8} {'size':>9}  {'tasks':58} licence")
    for p in PRESETS.values():
        here = local_size(p, model_dir)
        state = "built-in" if p.offline else ("yes" if here is not None else "no")
        size = "-" if p.offline else (f"{here / 1e9:.1f} GB" if here else f"~{p.download_gb:g} GB")
        tasks = ", ".join(t.value for t in p.tasks)
        typer.echo(f"{p.id:22} {state:8} {size:>9}  {tasks:58} {p.licence}")


@models_cli.command("pull")
def models_pull(preset: str) -> None:
    """Download a hub preset's weights (safetensors only) and pin the commit fetched."""
    from engine import EngineError
    from engine.loading import pull

    try:
        path = pull(preset, Settings().resolved_model_dir)
    except EngineError as exc:
        raise _fail(str(exc)) from exc
    except OSError as exc:
        raise _fail(f"could not download {preset}: {exc}") from exc
    typer.echo(f"{preset} is in {path}")


@cli.command()
def qc(
    file: Path,
    spec: str = typer.Option("broadcast", help=f"Delivery spec: {', '.join(SPECS)}."),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Check a spot file against a destination's delivery spec: a PASS/FAIL line per rule; exit 0
    only when every rule passes."""
    import json

    from templates import qc as quality

    if spec not in SPECS:
        raise _fail(f"unknown spec {spec!r}; one of: {', '.join(SPECS)}")
    if not file.is_file():
        raise _fail(f"no such file: {file}")
    report = quality.check(file, SPECS[spec])
    typer.echo(json.dumps(report.to_dict(), indent=2) if json_out else report.text())
    raise typer.Exit(0 if report.passed else 1)


@cli.command()
def verify(file: Path) -> None:
    """Print a file's C2PA manifest (JSON) and whether the file still matches it: exit 0 when
    it does, 1 when it does not (a changed byte, no manifest)."""
    import json

    from app.services import provenance

    if not file.is_file():
        raise _fail(f"no such file: {file}")
    seen = provenance.verify(Settings(), file)
    typer.echo(json.dumps(seen.to_dict(), indent=2))
    if seen.matches:
        trust = "" if seen.trusted else " (its signer is not in this machine's trust list)"
        typer.echo(f"matches: {file} is what its manifest signed{trust}")
        raise typer.Exit(0)
    why = ", ".join(seen.failures) or seen.state or "no manifest"
    typer.echo(f"does not match: {file} ({why})")
    raise typer.Exit(1)


def _order_line(order) -> str:
    shapes, destinations = ", ".join(order.shapes), ", ".join(order.destinations)
    return f"order {order.id}\t{order.status}\t{order.quote_text}\t{shapes}\t{destinations}"


@order_cli.command("quote")
def order_quote(
    business: int = typer.Option(..., "--business", "-b", help="Business id."),
    variant: list[int] = typer.Option(..., "--variant", "-v", help="Variant id; repeat."),
    shape: list[str] = typer.Option(["16:9"], "--shape", help="16:9, 9:16 or 1:1; repeat."),
    destination: list[str] = typer.Option(
        ["broadcast"], "--destination", "-d", help="A delivery spec (see `qc`); repeat."
    ),
) -> None:
    """Quote ready variants, each in every --shape, checked for every --destination."""
    from app.services import USER_ERRORS, orders

    try:
        order = orders.quote(_context(), business, variant, shapes=shape, destinations=destination)
    except USER_ERRORS as exc:
        raise _fail(str(exc)) from exc
    typer.echo(_order_line(order))


@order_cli.command("approve")
def order_approve(
    order: int = typer.Argument(..., help="Order id."),
    business: int = typer.Option(..., "--business", "-b", help="Business id."),
    wait: bool = typer.Option(
        False, "--wait", help="Render the finals here and wait until the order is settled."
    ),
    out: Path = typer.Option(None, "-o", "--out", help="With --wait: write the package here."),
) -> None:
    """Approve (purchase) a quoted order; its finals are rendered by the app's worker, or here
    with --wait."""
    from app.services import USER_ERRORS, orders

    ctx = _context()
    try:
        view = orders.approve(ctx, business, order)
        if wait and view.status == "rendering":
            view = _work_until_settled(ctx, business, order)
        if out is not None and view.status == "delivered":
            _write_package(ctx, business, order, out)
    except USER_ERRORS as exc:
        raise _fail(str(exc)) from exc
    finally:
        ctx.close()
    typer.echo(_order_line(view))
    raise typer.Exit(0 if view.status in ("rendering", "delivered") else 1)


@order_cli.command("status")
def order_status(
    order: int = typer.Argument(..., help="Order id."),
    business: int = typer.Option(..., "--business", "-b", help="Business id."),
) -> None:
    """Where an order stands, and each master's verdict per destination."""
    from app.services import USER_ERRORS, orders

    try:
        view = orders.status(_context(), business, order)
    except USER_ERRORS as exc:
        raise _fail(str(exc)) from exc
    typer.echo(_order_line(view))
    for d in view.deliveries:
        checks = ", ".join(
            f"{name} {'pass' if ok else 'FAIL' if ok is False else 'unchecked'}"
            for name, ok in d.verdicts
        )
        typer.echo(f"  variant {d.variant_id} {d.shape}\t{d.error or checks or 'not rendered'}")


@order_cli.command("package")
def order_package(
    order: int = typer.Argument(..., help="Order id."),
    business: int = typer.Option(..., "--business", "-b", help="Business id."),
    out: Path = typer.Option(..., "-o", "--out", help="A .zip path, or a folder to write it in."),
) -> None:
    """Write a delivered order's package (masters, QC reports, spec sheet) to a path."""
    from app.services import USER_ERRORS

    ctx = _context()
    try:
        _write_package(ctx, business, order, out)
    except USER_ERRORS as exc:
        raise _fail(str(exc)) from exc
    finally:
        ctx.close()


def _write_package(ctx, business: int, order: int, out: Path) -> None:
    import shutil

    from app.services import delivery

    found = delivery.package_path(ctx, business, order)
    target = out / found.filename if out.is_dir() else out
    shutil.copyfile(found.path, target)
    typer.echo(f"wrote {target}")


def _work_until_settled(ctx, business: int, order: int):
    """The app's worker, in this process, until the order is delivered or failed."""
    import time

    from app.services import orders
    from app.services.context import open_engine
    from app.services.worker import Worker

    with open_engine(ctx.settings) as engine:
        worker = Worker(ctx, engine).start()
        try:
            while (view := orders.status(ctx, business, order)).status == "rendering":
                time.sleep(1.0)
        finally:
            worker.stop()
    return view


@cli.command()
def render(
    template: str = typer.Option(..., help="Template id (see `spotforge templates`)."),
    brief: Path = typer.Option(..., help="The brief as JSON (fields of templates.Brief)."),
    background: Path = typer.Option(..., help="Picture for background scenes."),
    product: Path = typer.Option(..., help="Product photo; its subject is cut out."),
    tier: str = typer.Option("final", help="final (broadcast master) or preview"),
    aspect: str = typer.Option(
        "16:9", help="Screen shape: 16:9 (TV), 9:16 (upright phone) or 1:1 (square feed)."
    ),
    audio: Path = typer.Option(None, help="Audio bed; default: the template's built-in one."),
    out: Path = typer.Option(..., "-o", "--out", help="Output .mp4; its QC report goes beside."),
) -> None:
    """Render a spot from a template, a brief and two stills in one screen shape, then QC it
    (a final against its shape's spec: broadcast, social-vertical or social-square)."""
    import json

    from PIL import Image
    from pydantic import ValidationError

    from engine.segmentation import Segmenter
    from templates.errors import BriefError
    from templates.export import TIERS, shaped
    from templates.export import render as render_spot
    from templates.motion import Still
    from templates.spec import SHAPES, load_template
    from templates.storyboard import Brief, build_storyboard

    if tier not in TIERS:
        raise _fail(f"unknown tier {tier!r}; one of: {', '.join(TIERS)}")
    if aspect not in SHAPES:
        raise _fail(f"unknown aspect {aspect!r}; one of: {', '.join(SHAPES)}")
    try:
        board = build_storyboard(
            load_template(template), Brief.model_validate_json(brief.read_text())
        )
        backdrop, photo = Image.open(background), Image.open(product)
        backdrop.load()
        photo.load()
    except (BriefError, ValidationError, OSError) as exc:
        raise _fail(str(exc)) from exc
    cutout = Segmenter(Settings().segmentation_model).cutout(photo)
    visuals = {
        s.index: Still(backdrop, subject=cutout if s.visual.source == "product" else None)
        for s in board.scenes
        if s.visual.source != "brand"
    }
    try:
        result = render_spot(board, visuals, shaped(TIERS[tier], aspect), out, audio)
    except (BriefError, RuntimeError) as exc:  # copy that cannot be laid out, unreadable audio
        raise _fail(str(exc)) from exc
    out.with_suffix(".qc.json").write_text(json.dumps(result.report.to_dict(), indent=2))
    typer.echo(result.report.text())
    typer.echo(
        json.dumps(
            {
                "file": str(out),
                "frames": result.frames,
                "timings_s": {k: round(v, 2) for k, v in result.timings.items()},
            }
        )
    )
    raise typer.Exit(0 if result.report.passed else 1)


@cli.command()
def bulk(
    business: int = typer.Option(..., "--business", "-b", help="Business id."),
    spot: list[int] = typer.Option(..., "--spot", help="Spot (creative) id; repeat for more."),
    geography: list[str] = typer.Option(..., "--geography", "-g", help="Geography name."),
    audience: list[str] = typer.Option(..., "--audience", "-a", help="Audience name."),
    preset: str = typer.Option(None, help="Model preset (default: SPOTFORGE_MODEL)."),
    recipe: str = typer.Option("balanced"),
    seed: int = typer.Option(0),
    reuse: bool = typer.Option(True, help="--no-reuse makes every background anew (to measure)."),
    workers: int = typer.Option(
        None,
        min=0,
        help="Engine workers in a Ray pool (default: SPOTFORGE_WORKERS; 0: this process).",
    ),
    ray_address: str = typer.Option(
        None, help="Ray cluster for the pool (default: SPOTFORGE_RAY_ADDRESS, else a local one)."
    ),
) -> None:
    """Make every variant of spots x geographies x audiences, here or with a pool of workers.
    Run it again after a crash or Ctrl-C: finished variants are kept and the rest are made, none
    twice. The JSON report counts the frames each worker made under "workers"."""
    import json

    from tqdm import tqdm

    from app.services import USER_ERRORS, library
    from app.services import bulk as bulk_runs
    from app.services.context import open_engine
    from app.services.matrix import plan_matrix
    from engine import EngineError

    settings = Settings()
    ctx = _context()
    try:
        geographies = _ids_by_name(library.geographies(ctx, business), geography, "geography")
        audiences = _ids_by_name(library.audiences(ctx, business), audience, "audience")
        with open_engine(settings) as engine:
            plan = plan_matrix(
                ctx, engine, business, spot, geographies, audiences,
                preset=preset or settings.model, recipe=recipe, seed=seed,
            )  # fmt: skip
            typer.echo(
                f"{plan.variants} variants, {plan.backgrounds} backgrounds "
                f"({plan.backgrounds_cached} already made), about {plan.estimated_s:.0f} s "
                "of backgrounds",
                err=True,
            )
            run = bulk_runs.start(ctx, engine, business, plan)
            before = bulk_runs.run_status(ctx, business, run)
            with tqdm(total=before.variants, initial=before.ready + before.failed,
                      desc="variants", unit="variant") as bar:  # fmt: skip

                def advance(done: int, total: int) -> None:
                    bar.update(done - bar.n)

                pool_size = settings.workers if workers is None else workers
                if pool_size:
                    from app.services.pool import WorkerPool

                    with WorkerPool(settings, pool_size, ray_address) as pool:
                        typer.echo(f"{pool_size} workers: {', '.join(pool.names)}", err=True)
                        report = pool.work(ctx, business, run, reuse=reuse, on_variant=advance)
                else:
                    report = bulk_runs.work(
                        ctx, engine, business, run, reuse=reuse, on_variant=advance
                    )
    except (*USER_ERRORS, EngineError) as exc:
        raise _fail(str(exc)) from exc
    finally:
        ctx.close()
    typer.echo(json.dumps(report.to_dict()))


@cli.command()
def review(
    business: int = typer.Option(..., "--business", "-b", help="Business id."),
    spot: int = typer.Option(..., "--spot", help="Spot id."),
    refine: bool = typer.Option(
        False, "--refine", help="Make the failed variants again until they pass or the budget ends."
    ),
    tries: int = typer.Option(3, help="With --refine: retries in a line for one variant."),
    seconds: float = typer.Option(300.0, help="With --refine: no new round after this long."),
    json_out: bool = typer.Option(False, "--json", help='Print {"variants": [...]} as JSON.'),
) -> None:
    """Score every variant of a spot by the named checks (legibility, product fidelity,
    background match, composition, QC, distinct, integrity) and print a table, or JSON with
    --json. With --refine the failed ones are made again (another background, or made afresh;
    each retry a child in the lineage; approved variants never touched) and the spot is shown
    as it stands after. Exit 0 when every variant passed (a check that cannot judge yet, such as
    QC before any render, fails none), 1 otherwise; how long it took goes to stderr."""
    import json

    from app.services import USER_ERRORS
    from app.services import review as reviews
    from app.services.context import open_engine
    from app.services.review import refine as refining
    from engine import EngineError

    if tries < 1 or seconds <= 0:
        raise _fail("--tries must be at least 1 and --seconds more than 0")
    settings = Settings()
    ctx = _context()
    try:
        # Reviewing asks the engine only for stored cut-outs; refining makes backgrounds.
        with open_engine(settings, **({} if refine else {"max_batch": 1})) as engine:
            if refine:
                refined = refining.refine(ctx, engine, business, spot, tries=tries,
                                          seconds=seconds)  # fmt: skip
                result, shown = refined.after, refined.to_dict()
            else:
                refined, result = None, reviews.review_spot(ctx, engine, business, spot)
                shown = result.to_dict()
    except (*USER_ERRORS, EngineError) as exc:
        raise _fail(str(exc)) from exc
    finally:
        ctx.close()
    if json_out:
        typer.echo(json.dumps(shown, indent=2))
    else:
        typer.echo(reviews.table(result))
        if refined is not None:
            typer.echo(refining.summary(refined))
    if refined is None:
        took = f"{result.seconds:.1f} s ({result.seconds_per_variant:.2f} s a variant)"
    else:
        took = f"{refined.seconds:.1f} s, {len(refined.retries)} made again"
    typer.echo(f"reviewed {len(result.variants)} variants in {took}", err=True)
    raise typer.Exit(0 if result.passed else 1)


def _ids_by_name(views, names: list[str], what: str) -> list[int]:
    from app.services import UserError

    by_name = {v.name.lower(): v.id for v in views}
    unknown = [n for n in names if n.lower() not in by_name]
    if unknown:
        raise UserError(f"unknown {what} {unknown[0]!r}; see the library for the names")
    return [by_name[n.lower()] for n in names]


@cli.command()
def demo(
    out: Path = typer.Option(Path("demo"), "--out", help="Folder for everything the demo makes."),
    finals: bool = typer.Option(True, help="--no-finals renders previews only (faster)."),
) -> None:
    """The whole journey offline: a business, a 15 s spot, 2 geographies x 2 audiences, each
    variant's frame, preview and broadcast final with QC. Prints a JSON summary."""
    import json

    from app.services.demo import run_demo

    tiers = ("preview", "final") if finals else ("preview",)
    summary = run_demo(out, Settings(), tiers)
    typer.echo(json.dumps(summary, indent=2))
    if not summary["all_qc_passed"]:
        raise typer.Exit(1)


@cli.command("templates")
def templates_list() -> None:
    """The spot templates: id, length, scenes, and what each is for."""
    from templates.spec import all_templates

    for t in all_templates():
        typer.echo(f"{t.id:18} {t.duration:>2} s  {len(t.scenes)} scenes  {t.use_case}")


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise _fail(f"size must look like 512x512, not {text!r}") from None
    return width, height


def main() -> None:
    cli()
