"""The first screen: a business, its campaigns. Every action is also a named API endpoint."""

from __future__ import annotations

import gradio as gr

from app.services import USER_ERRORS, AppContext, businesses

CAMPAIGN_HEADERS = ["Campaign", "Objective", "Status", "Created (UTC)"]
CSS = """
.gradio-container { max-width: 960px !important; margin: auto; }
"""


def build(ctx: AppContext) -> gr.Blocks:
    def business_choices(selected: int | None = None) -> gr.Dropdown:
        choices = [(b.name, b.id) for b in businesses.list_all(ctx)]
        if selected is None and choices:
            selected = choices[0][1]
        return gr.Dropdown(choices=choices, value=selected)

    def create_business(name: str) -> tuple[gr.Dropdown, str]:
        try:
            business = businesses.create(ctx, name)
        except USER_ERRORS as exc:
            raise gr.Error(str(exc)) from exc
        gr.Info(f"Created {business.name}")
        return business_choices(business.id), ""

    def campaign_rows(business_id: int | None) -> list[list[str]]:
        if business_id is None:
            return []
        try:
            campaigns = businesses.list_campaigns(ctx, int(business_id))
        except USER_ERRORS as exc:
            raise gr.Error(str(exc)) from exc
        return [
            [c.name, c.objective, c.status, c.created_at.strftime("%Y-%m-%d %H:%M")]
            for c in campaigns
        ]

    def create_campaign(business_id: int | None, name: str, objective: str):
        if business_id is None:
            raise gr.Error("Create or choose a business first.")
        try:
            campaign = businesses.create_campaign(ctx, int(business_id), name, objective)
        except USER_ERRORS as exc:
            raise gr.Error(str(exc)) from exc
        gr.Info(f"Created campaign {campaign.name}")
        return campaign_rows(business_id), "", ""

    with gr.Blocks(title="Spotforge", analytics_enabled=False) as page:
        gr.Markdown(
            "# Spotforge\nBroadcast-ready TV spots for your business, personalized for every "
            "place and audience you sell to."
        )
        with gr.Row(equal_height=True):
            business = gr.Dropdown(label="Business", choices=[], scale=2, elem_id="business")
            new_business = gr.Textbox(
                label="New business",
                placeholder="e.g. Trailhead Running Co.",
                scale=2,
                max_length=120,
                elem_id="new-business",
            )
            add_business = gr.Button("Create business", variant="secondary", scale=1)
        gr.Markdown("## Campaigns")
        with gr.Row(equal_height=True):
            campaign_name = gr.Textbox(
                label="Campaign name",
                placeholder="e.g. Spring trail sale",
                max_length=120,
                elem_id="campaign-name",
            )
            objective = gr.Textbox(
                label="Objective",
                placeholder="e.g. Bring Bay Area runners to the store",
                max_length=500,
                elem_id="campaign-objective",
            )
        add_campaign = gr.Button("Create campaign", variant="primary")
        campaigns = gr.Dataframe(
            headers=CAMPAIGN_HEADERS,
            type="array",
            interactive=False,
            elem_id="campaigns",
            label="Campaigns of this business",
        )

        page.load(business_choices, outputs=business, api_name="list_businesses")
        add_business.click(
            create_business,
            inputs=new_business,
            outputs=[business, new_business],
            api_name="create_business",
        )
        business.change(
            campaign_rows, inputs=business, outputs=campaigns, api_name="list_campaigns"
        )
        add_campaign.click(
            create_campaign,
            inputs=[business, campaign_name, objective],
            outputs=[campaigns, campaign_name, objective],
            api_name="create_campaign",
        )
    return page


def serve(ctx: AppContext) -> None:
    build(ctx).launch(
        server_name=ctx.settings.host,
        server_port=ctx.settings.port,
        css=CSS,
        show_error=False,
        footer_links=["api"],
    )
