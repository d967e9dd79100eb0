"""The `spotforge` command: serve the app, manage the database, script the use cases."""

from __future__ import annotations

import typer

from app.config import Settings
from storage import Database, migrate

cli = typer.Typer(
    help="Spotforge: broadcast-ready TV spots for small businesses.", no_args_is_help=True
)
db_cli = typer.Typer(help="Database schema (Alembic migrations).", no_args_is_help=True)
business_cli = typer.Typer(help="Businesses (tenants).", no_args_is_help=True)
campaign_cli = typer.Typer(help="Campaigns of one business.", no_args_is_help=True)
cli.add_typer(db_cli, name="db")
cli.add_typer(business_cli, name="business")
cli.add_typer(campaign_cli, name="campaign")


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
) -> None:
    """Upgrade the database and serve the web app."""
    from app.ui.web import serve as serve_web

    ctx = _context()
    if host:
        ctx.settings.host = host
    if port:
        ctx.settings.port = port
    typer.echo(f"Spotforge on http://{ctx.settings.host}:{ctx.settings.port}")
    serve_web(ctx)


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


def main() -> None:
    cli()
