"""The studio's layout: one tab per step, from brief to download, and the campaign library.

Every action is wired with an `api_name`, so gradio_client can drive the whole flow; what the
handlers do is in `app.ui.studio`.
"""

from __future__ import annotations

import gradio as gr

from app.services import AppContext
from app.services.text_rules import limit
from app.ui.studio import Studio, following, stopped

DEFAULT_SETTING = "street with buildings during the day"  # a scene the offline model knows
# No handler waits for queued work (renders, runs, finals): one starts it and returns, and the
# page's timer asks where it stands every TICK_S seconds, one short read at a time. The reads
# have slots of their own, so progress keeps coming while long handlers (storyboards,
# backgrounds) fill WORKERS, and those never wait behind reads; a timer sends no tick while its
# last one is pending (Gradio's trigger_mode "once"). Beyond QUEUE_MAX waiting events, Gradio
# answers "queue full" at once rather than keep anyone waiting.
WORKERS, READERS, QUEUE_MAX = 8, 8, 64
TICK_S = 1.0
READ = {"concurrency_id": "read", "concurrency_limit": READERS}
TICK = {**READ, "show_progress": "hidden", "api_name": False}
CSS = """
/* width 100%: a flex item with auto margins would otherwise grow to its content's width */
.gradio-container { width: 100%; max-width: 1100px !important; margin: auto; }
#status, #variants-status, #order-status { min-height: 2.5em; }
.sign-out { padding: 6px 14px; border-radius: 8px; border: 1px solid #c8ccd2; }
.prose table { display: block; overflow-x: auto; }
@media (max-width: 640px) {  /* a phone: every row becomes a column */
  .gradio-container { padding: 6px !important; }
  .row { flex-direction: column !important; }
  .row > * { width: 100% !important; min-width: 0 !important; }
  #campaigns { overflow-x: auto; }
}
"""


def build(ctx: AppContext, engine) -> gr.Blocks:
    s = Studio(ctx, engine)
    catalog = s.catalog()  # fixed choices, so an API client may send any of them
    with gr.Blocks(title="Spotforge", analytics_enabled=False) as page:
        with gr.Row(equal_height=True):
            gr.Markdown("# Spotforge")
            who = gr.Markdown(elem_id="who")
            gr.HTML(
                '<form method="post" action="/logout"><button class="sign-out" '
                'type="submit">Sign out</button></form>'
            )
        spot = gr.Number(value=None, precision=0, visible=False)  # the spot every step works on
        working_on = gr.Markdown("No spot yet: start with the brief.", elem_id="working-on")

        with gr.Tabs():
            with gr.Tab("1 · Brief", id="brief"):
                with gr.Row():
                    campaign = gr.Textbox(
                        label="Campaign name",
                        max_length=limit("campaign_name"),
                        placeholder="e.g. Spring trail sale",
                    )
                    objective = gr.Textbox(
                        value="",
                        label="Objective",
                        max_length=limit("objective"),
                        placeholder="e.g. Bring Bay Area runners in",
                    )
                duration = gr.Radio([15, 30], value=15, label="Length (seconds)")
                thumbnails = gr.Gallery(
                    object_fit="contain",
                    label="Templates (click one)",
                    columns=3,
                    height="auto",
                    allow_preview=False,
                    elem_id="templates",
                )
                template = gr.Dropdown(
                    label="Template",
                    choices=catalog.templates,
                    value="product-hero",
                    elem_id="template",
                )
                template_note = gr.Markdown(
                    s.template_note("product-hero"), elem_id="template-note"
                )
                with gr.Row():
                    photos = gr.File(
                        label="Product photos",
                        file_count="multiple",
                        file_types=["image"],
                        elem_id="photos",
                    )
                    logo = gr.File(label="Logo (optional)", file_types=["image"])
                with gr.Row():
                    primary = gr.ColorPicker(value="#1F3A5F", label="Brand colour")
                    accent = gr.ColorPicker(value="#F2B134", label="Accent colour")
                    heading_font = gr.File(
                        label="Heading font (optional, TTF/OTF)", file_types=[".ttf", ".otf"]
                    )
                    body_font = gr.File(
                        label="Body font (optional, TTF/OTF)", file_types=[".ttf", ".otf"]
                    )
                with gr.Row():
                    product = gr.Textbox(
                        value="", label="Product", max_length=limit("product_name")
                    )
                    headline = gr.Textbox(value="", label="Headline", max_length=limit("headline"))
                body = gr.Textbox(value="", label="Body", max_length=limit("body"))
                with gr.Row():
                    offer = gr.Textbox(
                        value="", label="Offer", max_length=limit("offer"), placeholder="20 % off"
                    )
                    cta = gr.Textbox(
                        value="",
                        label="Call to action",
                        max_length=limit("cta_text"),
                        placeholder="Visit us today",
                    )
                with gr.Row():
                    url = gr.Textbox(
                        value="",
                        label="Web address (shown with a QR code)",
                        max_length=limit("cta_url"),
                    )
                    phone = gr.Textbox(value="", label="Phone", max_length=limit("phone"))
                with gr.Row():
                    tagline = gr.Textbox(value="", label="Tagline", max_length=limit("tagline"))
                    setting = gr.Textbox(
                        label="Where it is set", value=DEFAULT_SETTING, max_length=limit("setting")
                    )
                create = gr.Button("Create storyboard", variant="primary")

            with gr.Tab("2 · Storyboard", id="storyboard"):
                board = gr.Gallery(
                    object_fit="contain", label="Scenes", columns=4, height="auto", elem_id="board"
                )
                scenes = gr.Markdown()
                with gr.Row(equal_height=True):
                    scene_order = gr.Textbox(
                        label="Scene order", placeholder="e.g. 1, 3, 2, 4", elem_id="order"
                    )
                    reorder = gr.Button("Apply order")
                    redraw_scene = gr.Number(label="Scene", value=None, precision=0)
                    redraw = gr.Button("New background for this scene")
                with gr.Row():
                    show = gr.Button("Show backgrounds")
                    more = gr.Button("Other backgrounds")
                candidates = gr.Gallery(
                    object_fit="contain",
                    label="Backgrounds for your setting (click one)",
                    columns=3,
                    height="auto",
                    allow_preview=False,
                    elem_id="candidates",
                )
                round_ = gr.Number(value=0, visible=False, precision=0)
                with gr.Row():
                    seed = gr.Number(label="Chosen background", value=None, precision=0)
                    use = gr.Button("Use this background", variant="primary")
                chosen = gr.Markdown()

            with gr.Tab("3 · Preview", id="preview"):
                with gr.Row():
                    render = gr.Button("Render preview", variant="primary")
                    stop_preview = gr.Button("Cancel")
                status = gr.Markdown(elem_id="status")
                video = gr.Video(label="Preview (watermarked)", elem_id="preview-video")
                frames = gr.Gallery(object_fit="contain", label="Scenes", columns=4, height="auto")
                preview_job = gr.Number(visible=False, precision=0)
                preview_follow = gr.JSON(visible=False, label="Follow")  # the job followed
                preview_timer = gr.Timer(TICK_S, active=False)

            with gr.Tab("4 · Personalize", id="personalize"):
                places = gr.CheckboxGroup(
                    label="Places", choices=catalog.geographies, elem_id="places"
                )
                people = gr.CheckboxGroup(
                    label="Audiences", choices=catalog.audiences, elem_id="audiences"
                )
                estimate = gr.Markdown(elem_id="estimate")
                with gr.Row():
                    make = gr.Button("Make variants", variant="primary")
                    stop_variants = gr.Button("Stop")
                progress = gr.Markdown(elem_id="variants-status")
                run = gr.Textbox(label="Run", interactive=False, elem_id="run")
                with gr.Row():
                    only_place = gr.Dropdown(
                        label="Show place", choices=["All"], value="All", allow_custom_value=True
                    )
                    only_people = gr.Dropdown(
                        label="Show audience", choices=["All"], value="All", allow_custom_value=True
                    )
                gallery = gr.Gallery(
                    object_fit="contain",
                    label="Variants",
                    columns=4,
                    height="auto",
                    elem_id="variants",
                )
                variants_follow = gr.JSON(visible=False, label="Follow")  # the run followed
                variants_timer = gr.Timer(TICK_S, active=False)

            with gr.Tab("5 · Compare", id="compare"):
                with gr.Row():
                    # Any id may be asked for (the handler checks it is this business's).
                    pick_a = gr.Dropdown(
                        label="Variant A", allow_custom_value=True, elem_id="variant-a"
                    )
                    pick_b = gr.Dropdown(
                        label="Variant B", allow_custom_value=True, elem_id="variant-b"
                    )
                side = gr.Button("Compare")
                with gr.Row():
                    with gr.Column():
                        frame_a = gr.Image(label="A", interactive=False)
                        about_a = gr.Markdown()
                    with gr.Column():
                        frame_b = gr.Image(label="B", interactive=False)
                        about_b = gr.Markdown()

            with gr.Tab("6 · Buy & download", id="order"):
                chosen_variants = gr.CheckboxGroup(label="Variants to buy", elem_id="buy")
                ask = gr.Button("Get a quote")
                order = gr.Number(label="Order", value=None, precision=0, interactive=False)
                order_text = gr.Markdown(elem_id="order-status")
                with gr.Row():
                    approve = gr.Button("Approve and purchase", variant="primary")
                    check = gr.Button("Check order")
                    retry = gr.Button("Render again")
                    withdraw = gr.Button("Cancel order")
                downloads = gr.Markdown(elem_id="downloads")
                delivered = gr.File(label="Broadcast files and QC reports", file_count="multiple")
                order_follow = gr.JSON(visible=False, label="Follow")  # the order followed
                order_timer = gr.Timer(TICK_S, active=False)

            with gr.Tab("Library", id="library"):
                refresh = gr.Button("Refresh")
                table = gr.Dataframe(
                    headers=["#", "Campaign", "Objective", "Status", "Created"],
                    interactive=False,
                    elem_id="campaigns",
                )
                which = gr.Dropdown(label="Campaign")
                tree = gr.Markdown(elem_id="lineage")
                with gr.Row():
                    open_it = gr.Button("Open this campaign", variant="primary")
                    duplicate = gr.Button("Duplicate campaign")
                    again = gr.Number(label="Variant to re-render", value=None, precision=0)
                    rerender = gr.Button("Re-render preview")
                library_note = gr.Markdown()

        # Wiring: each event a named endpoint. ------------------------------------------------
        spot.change(s.spot_label, inputs=spot, outputs=working_on, api_name=False)
        page.load(s.welcome, outputs=who, api_name="whoami")
        page.load(
            s.templates, inputs=duration, outputs=[thumbnails, template], api_name="templates"
        )
        page.load(
            s.library_choices,
            outputs=[places, people, only_place, only_people],
            api_name="library_choices",
        )
        duration.change(
            s.templates, inputs=duration, outputs=[thumbnails, template], api_name=False
        )
        thumbnails.select(s.pick_template, inputs=duration, outputs=template, api_name=False)
        template.change(s.template_note, inputs=template, outputs=template_note, api_name=False)
        created = create.click(
            s.create_spot,
            inputs=[
                campaign,
                objective,
                template,
                photos,
                primary,
                accent,
                product,
                headline,
                body,
                offer,
                cta,
                url,
                phone,
                tagline,
                setting,
                logo,  # optional ones last: an API client may leave them out
                heading_font,
                body_font,
            ],
            outputs=[spot, board, scenes],
            api_name="create_spot",
        )
        created.success(s.brief_notes, inputs=spot, outputs=template_note, api_name=False)

        reorder.click(
            s.reorder_scenes,
            inputs=[spot, scene_order],
            outputs=[board, scenes],
            api_name="reorder_scenes",
        )
        redraw.click(
            s.regenerate_scene,
            inputs=[spot, redraw_scene],
            outputs=[board, scenes],
            api_name="regenerate_scene",
        )
        show.click(
            s.background_candidates,
            inputs=[spot, round_],
            outputs=[candidates, round_],
            api_name="background_candidates",
        )
        more.click(lambda r: int(r or 0) + 1, inputs=round_, outputs=round_, api_name=False).then(
            s.background_candidates,
            inputs=[spot, round_],
            outputs=[candidates, round_],
            api_name=False,
        )
        candidates.select(s.pick_candidate, inputs=round_, outputs=seed, api_name=False)
        use.click(
            s.choose_background,
            inputs=[spot, seed],
            outputs=[board, scenes, chosen],
            api_name="choose_background",
        )

        # Long work: a click starts it and returns what to follow; the page's timer reads where
        # it stands until it is done, and a read that fails (the render failed, the session
        # ended) stops the timer. A script calls the same start, then the `*_progress` read
        # with what it returned. (What is followed is held by the page, not in a gr.State: a
        # State would keep a connection open from every page, which the server waits for when
        # it stops.)
        preview = render.click(
            s.render_preview,
            inputs=spot,
            outputs=[status, video, frames, preview_job, preview_follow],
            api_name="render_preview",
        )
        preview.success(following, inputs=preview_follow, outputs=preview_timer, **TICK)
        preview_tick = preview_timer.tick(
            s.preview_tick,
            inputs=preview_follow,
            outputs=[status, video, frames, preview_follow, preview_timer],
            **TICK,
        )
        preview_tick.failure(stopped, outputs=preview_timer, **TICK)
        gr.on(
            [],
            s.preview_progress,
            inputs=preview_follow,
            outputs=[status, video, frames, preview_follow],
            api_name="preview_progress",
            **READ,
        )
        stop_preview.click(
            s.cancel_job,
            inputs=preview_job,
            outputs=status,
            cancels=[preview, preview_tick],
            api_name="cancel_job",
        )
        stop_preview.click(stopped, outputs=preview_timer, **TICK)

        for chooser in (places, people):
            chooser.change(
                s.plan_variants, inputs=[spot, places, people], outputs=estimate, api_name=False
            )
        gr.api(s.plan_variants, api_name="plan_variants")
        making = make.click(
            s.make_variants,
            inputs=[spot, places, people],
            outputs=[progress, gallery, run, variants_follow],
            api_name="make_variants",
        )
        choices = [pick_a, pick_b, chosen_variants]
        making.success(
            s.variants_started,
            inputs=variants_follow,
            outputs=[*choices, variants_timer],
            **TICK,
        )
        variants_tick = variants_timer.tick(
            s.variants_tick,
            inputs=variants_follow,
            outputs=[progress, gallery, variants_follow, *choices, variants_timer],
            **TICK,
        )
        variants_tick.failure(stopped, outputs=variants_timer, **TICK)
        gr.on(
            [],
            s.variants_progress,
            inputs=variants_follow,
            outputs=[progress, gallery, variants_follow],
            api_name="variants_progress",
            **READ,
        )
        stop_variants.click(
            s.cancel_variants,
            inputs=run,
            outputs=progress,
            cancels=[making, variants_tick],
            api_name="cancel_variants",
        )
        stop_variants.click(stopped, outputs=variants_timer, **TICK)
        for narrow, name in ((only_place, "variant_gallery"), (only_people, False)):
            narrow.change(
                s.variant_gallery,
                inputs=[spot, only_place, only_people],
                outputs=gallery,
                api_name=name,
            )

        side.click(
            s.compare,
            inputs=[pick_a, pick_b],
            outputs=[frame_a, about_a, frame_b, about_b],
            api_name="compare",
        )

        ask.click(s.quote, inputs=chosen_variants, outputs=[order, order_text], api_name=False)
        for button, handler in ((approve, s.approve), (retry, s.retry_order)):
            button.click(
                handler,
                inputs=order,
                outputs=[order_text, delivered, downloads, order_follow],
                api_name=handler.__name__,
            ).success(following, inputs=order_follow, outputs=order_timer, **TICK)
        order_timer.tick(
            s.order_tick,
            inputs=order_follow,
            outputs=[order_text, delivered, downloads, order_follow, order_timer],
            **TICK,
        ).failure(stopped, outputs=order_timer, **TICK)
        gr.on(
            [],
            s.order_progress,
            inputs=order_follow,
            outputs=[order_text, delivered, downloads, order_follow],
            api_name="order_progress",
            **READ,
        )
        withdraw.click(
            s.cancel_order,
            inputs=order,
            outputs=[order_text, delivered, downloads],
            api_name="cancel_order",
        )
        check.click(
            s.order_status,
            inputs=order,
            outputs=[order_text, delivered, downloads],
            api_name="order_status",
        )

        refresh.click(s.campaigns, outputs=[table, which], api_name="campaigns")
        page.load(s.campaigns, outputs=[table, which], api_name=False)
        open_it.click(
            s.open_campaign,
            inputs=which,
            outputs=[spot, board, scenes, library_note],
            api_name=False,
        ).then(
            s.variant_choices,
            inputs=spot,
            outputs=choices,
            api_name="variant_choices",
        )
        which.change(s.lineage, inputs=which, outputs=tree, api_name=False)
        duplicate.click(
            s.duplicate_campaign, inputs=which, outputs=library_note, api_name=False
        ).then(s.campaigns, outputs=[table, which], api_name=False)
        rerender.click(s.rerender, inputs=again, outputs=library_note, api_name="rerender")
        # Inputs whose choices depend on the business are typed endpoints of their own (a
        # component would refuse a value it was not sent with).
        for handler in (s.quote, s.lineage, s.duplicate_campaign, s.open_campaign):
            gr.api(handler, api_name=handler.__name__)
    page.queue(default_concurrency_limit=WORKERS, max_size=QUEUE_MAX)
    return page
