"""The studio's layout: one tab per step, from brief to download, and the campaign library.

Every action is wired with an `api_name`, so gradio_client can drive the whole flow; what the
handlers do is in `app.ui.studio`.
"""

from __future__ import annotations

import gradio as gr

from app.services import AppContext
from app.services.copy_edits import EDITABLE
from app.services.orders import LABELS
from app.services.pictures import FOCUS_POINTS
from app.services.spots import MUSIC_CHOICES, UPLOADED
from app.services.text_rules import FIELDS, limit
from app.ui.review_panel import ReviewPanel
from app.ui.studio import (
    APPROVE,
    GENERATED,
    WORDS,
    Studio,
    following,
    halted,
    proposals_air,
    stopped,
    working,
)
from app.ui.variant_clips import GRID, VariantClips

DEFAULT_SETTING = "street with buildings during the day"  # a scene the offline model knows
BRAND_UNTIL_CHOSEN = (
    "Backgrounds for your setting are drawn below: click one, then use it. Until then the "
    "scenes show your brand colours."
)
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
# A live "12 / 60" under each field with a character limit, counted in the browser (no server
# call per key). Values the server sets (the saved brand kit, an edit's words) fire no input
# event, so the counters are also refreshed every second.
COUNTERS = """() => {
  const show = (field) => {
    const box = field.closest("label") || field;
    let counter = box.nextElementSibling;
    if (!counter || !counter.classList.contains("counter")) {
      counter = document.createElement("div");
      counter.className = "counter";
      box.insertAdjacentElement("afterend", counter);
    }
    const text = `${field.value.length} / ${field.maxLength}`;
    if (counter.textContent !== text) counter.textContent = text;
  };
  const all = () => document.querySelectorAll("textarea[maxlength], input[maxlength]")
    .forEach((field) => field.maxLength > 0 && show(field));
  document.addEventListener("input", (e) => e.target.maxLength > 0 && show(e.target));
  all();
  setInterval(all, 1000);
}"""
# Back and Forward move between the steps, as on any site: each step opened is an entry of the
# browser's history (the studio is one page, so Back would otherwise leave it). Tabs are found
# by their words: on a phone most are in the "More tabs" menu, as buttons without the tab role.
STEPS_HISTORY = """() => {
  const bar = document.querySelector("#steps .tab-wrapper");  // the tabs and "More tabs"
  if (!bar) return;
  const current = () =>
    bar.querySelector('button[role="tab"][aria-selected="true"]')?.textContent.trim();
  history.replaceState({ step: current() }, "");
  new MutationObserver(() => {
    const step = current();
    if (step && history.state?.step !== step) history.pushState({ step }, "");
  }).observe(bar, { subtree: true, childList: true, attributes: true,
                    attributeFilter: ["aria-selected"] });
  window.addEventListener("popstate", (event) => {
    const step = event.state?.step;
    const button = [...bar.querySelectorAll('button:not([tabindex="-1"])')]
      .find((b) => b.textContent.trim() === step);  // tabindex -1: Gradio's measuring copies
    if (button && current() !== step) button.click();
  });
}"""
CSS = """
/* width 100%: a flex item with auto margins would otherwise grow to its content's width */
.gradio-container { width: 100%; max-width: 1100px !important; margin: auto; }
#status, #variants-status, #order-status { min-height: 2.5em; }
.counter { text-align: right; font-size: 0.8em; color: var(--body-text-color-subdued); }
.sign-out { padding: 6px 14px; border-radius: 8px; border: 1px solid #c8ccd2; }
.prose table { display: block; overflow-x: auto; }
/* A gallery as tall as its pictures, not a fixed 320-450 px with space under one row. */
.fixed-height { min-height: 0 !important; }
/* A clip whole, as a picture is (Gradio crops a video to its square: the headline's ends). */
.thumbnail-item video { object-fit: contain !important; }
@media (max-width: 640px) {  /* a phone: every row becomes a column */
  .gradio-container { padding: 6px !important; }
  .row { flex-direction: column !important; }
  .row > * { width: 100% !important; min-width: 0 !important; }
  #campaigns { overflow-x: auto; }
  /* Two pictures a row (four at 100 px each ran off the screen), captions whole. */
  .grid-container { grid-template-columns: repeat(2, minmax(0, 1fr)) !important; }
  /* A caption under its picture, not over it: whole, a long one hid most of the picture. */
  .thumbnail-item { aspect-ratio: auto !important; height: auto !important;
                    display: flex; flex-direction: column; }
  /* a spot's frames are 16:9; another picture is shown whole inside that box */
  .thumbnail-item > img, .thumbnail-item > video { aspect-ratio: 16 / 9; }
  .caption-label { white-space: normal !important; position: static !important;
                   max-width: 100% !important; border: none !important; }
  /* Scene names and times whole ("Sce ne"); the table scrolls sideways instead. */
  .prose th:nth-child(-n+2), .prose td:nth-child(-n+2) { white-space: nowrap; }
  /* The words table's headings whole ("Aud ience"): its columns take their width, and it
     scrolls sideways. */
  #words th, #words th * { white-space: nowrap !important; word-break: keep-all !important; }
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

        with gr.Tabs(elem_id="steps"):
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
                    with gr.Column():
                        photos = gr.File(
                            label="Product photos",
                            file_count="multiple",
                            file_types=["image"],
                            elem_id="photos",
                        )
                        photos_note = gr.Markdown(elem_id="photos-note")  # the open spot's
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
                kit_note = gr.Markdown(elem_id="kit-note")  # the saved logo and fonts, if any
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
                copy_note = gr.Markdown(elem_id="copy-note")  # words the template can't fit
                setting_note = gr.Markdown(elem_id="setting-note")  # the words the model lacks
                gr.Examples(
                    [[text] for text in s.setting_suggestions()], inputs=setting,
                    label="Places and looks the model knows (click one)", examples_per_page=12,
                )  # fmt: skip
                with gr.Row():
                    # Choices are the business's own pictures (set at load and as it adds
                    # one); what is sent is checked against them by the service.
                    where = gr.Dropdown(
                        label="Where it is set: generated, or one of your pictures (Library)",
                        choices=[(GENERATED, "")], value="", allow_custom_value=True,
                        elem_id="where",
                    )  # fmt: skip
                    where_focus = gr.Radio(
                        list(FOCUS_POINTS), value="centre", label="Keep in the frame",
                        elem_id="where-focus",
                    )  # fmt: skip
                voiceover = gr.Textbox(
                    value="",
                    label="Voice-over (optional): what a voice says over the scenes",
                    max_length=limit("voiceover"),
                    lines=2,
                    placeholder="Fresh espresso, roasted every morning. Twenty percent off.",
                )
                voiceover_note = gr.Markdown(elem_id="voiceover-note")
                with gr.Row():
                    music = gr.Dropdown(label="Music", choices=MUSIC_CHOICES, value="")
                    music_file = gr.File(
                        label="Your own music (WAV, MP3 or M4A; trimmed and faded to the spot)",
                        file_types=[".wav", ".mp3", ".m4a"],
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
                    reorder = gr.Button("Apply order", interactive=False)
                    redraw_scene = gr.Number(
                        label="Scene (or click it above)", value=1, minimum=1, precision=0
                    )
                    redraw = gr.Button("New background for this scene", interactive=False)
                with gr.Row(equal_height=True):
                    scene_picture = gr.Dropdown(
                        label="Or set this scene in one of your pictures (Library)",
                        choices=[(GENERATED, "")], value="", allow_custom_value=True,
                    )  # fmt: skip
                    scene_focus = gr.Radio(
                        list(FOCUS_POINTS), value="centre", label="Keep in the frame"
                    )
                    set_scene = gr.Button("Set this scene in it", interactive=False)
                with gr.Row():
                    show = gr.Button("Show backgrounds", interactive=False)
                    more = gr.Button("Other backgrounds", interactive=False)
                candidates = gr.Gallery(
                    object_fit="contain",
                    label="Backgrounds for your setting (click one)",
                    columns=3,
                    height="auto",
                    allow_preview=False,
                    elem_id="candidates",
                )
                round_ = gr.Number(value=0, visible=False, precision=0)
                seed = gr.Number(value=None, visible=False, precision=0)  # the one clicked
                with gr.Row():
                    chosen = gr.Markdown(elem_id="chosen")
                    use = gr.Button("Use this background", variant="primary", interactive=False)

            with gr.Tab("3 · Preview", id="preview"):
                with gr.Row():
                    render = gr.Button("Render preview", variant="primary", interactive=False)
                    stop_preview = gr.Button("Cancel", interactive=False)
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
                # Nothing proposed airs unless chosen: "Airs" starts as the owner's words, and
                # is saved when the variants are made. Cells are text ("str"), never markup.
                words = gr.Dataframe(
                    headers=WORDS, label="Words per audience", type="array", datatype="str",
                    static_columns=[0, 1, 2, 3], wrap=True, interactive=True, elem_id="words",
                )  # fmt: skip
                use_proposals = gr.Button("Use the proposals")
                with gr.Row():
                    make = gr.Button("Make variants", variant="primary", interactive=False)
                    stop_variants = gr.Button("Stop", interactive=False)
                progress = gr.Markdown(elem_id="variants-status")
                run = gr.Textbox(visible=False)  # the run's key, for Stop: not the owner's to read
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
                with gr.Row(equal_height=True):
                    watch = gr.Button(f"Watch these ({GRID} at most)")
                    watching = gr.Markdown(elem_id="clips-status")
                clips = gr.Gallery(
                    label="Preview clips (watermarked)", columns=4, height="auto",
                    elem_id="clips",
                )  # fmt: skip
                clips_follow = gr.JSON(visible=False, label="Follow")  # the clips followed
                clips_timer = gr.Timer(TICK_S, active=False)
                with gr.Row():
                    check_all = gr.Button("Check variants")
                    fix = gr.Button("Fix these", interactive=False)
                flagged = gr.Markdown(elem_id="review")
                fix_follow = gr.JSON(visible=False, label="Follow")  # the retries followed
                fix_timer = gr.Timer(TICK_S, active=False)

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
                        frame_a = gr.Image(label="A", interactive=False, elem_id="picture-a")
                        about_a = gr.Markdown()
                        clip_a = gr.Video(
                            label="A, as a preview clip", interactive=False, elem_id="clip-a"
                        )
                    with gr.Column():
                        frame_b = gr.Image(label="B", interactive=False, elem_id="picture-b")
                        about_b = gr.Markdown()
                        clip_b = gr.Video(
                            label="B, as a preview clip", interactive=False, elem_id="clip-b"
                        )
                with gr.Row(equal_height=True):
                    play = gr.Button("Play both")
                    playing = gr.Markdown(elem_id="pair-status")
                pair_follow = gr.JSON(visible=False, label="Follow")  # the two clips followed
                pair_timer = gr.Timer(TICK_S, active=False)
                with gr.Accordion("Edit this variant's words (A)", open=False):
                    with gr.Row():
                        edit_slot = gr.Dropdown(
                            label="Line", value="headline",
                            choices=[(FIELDS[f][0].capitalize(), f) for f in EDITABLE],
                        )  # fmt: skip
                        edit_text = gr.Textbox(label="Your words", max_length=limit("headline"))
                    edit = gr.Button("Save as a new variant")
                    edited = gr.Markdown(elem_id="edited")

            with gr.Tab("6 · Buy & download", id="order"):
                chosen_variants = gr.CheckboxGroup(label="Variants to buy", elem_id="buy")
                with gr.Row():
                    buy_shapes = gr.CheckboxGroup(
                        label="Shapes", value=["16:9"], elem_id="buy-shapes",
                        choices=[("16:9 (TV)", "16:9"), ("9:16 (vertical)", "9:16"),
                                 ("1:1 (square)", "1:1")],
                    )  # fmt: skip
                    buy_destinations = gr.CheckboxGroup(
                        label="Destinations", value=["broadcast"], elem_id="buy-destinations",
                        choices=[(label, d) for d, label in LABELS.items()],
                    )  # fmt: skip
                ask = gr.Button("Get a quote", interactive=False)
                order = gr.Number(label="Order number", value=None, precision=0, interactive=False)
                order_text = gr.Markdown(elem_id="order-status")
                with gr.Row():
                    # Each enabled only while it applies to where the order stands (order_actions).
                    approve = gr.Button(APPROVE, variant="primary", interactive=False)
                    check = gr.Button("Check order", interactive=False)
                    retry = gr.Button("Render again", interactive=False)
                    withdraw = gr.Button("Cancel order", interactive=False)
                downloads = gr.Markdown(elem_id="downloads")
                delivered = gr.File(
                    label="The package, each master and its QC report", file_count="multiple"
                )
                order_follow = gr.JSON(visible=False, label="Follow")  # the order followed
                order_timer = gr.Timer(TICK_S, active=False)

            with gr.Tab("Library", id="library"):
                refresh = gr.Button("Refresh")
                table = gr.Dataframe(
                    headers=["Campaign", "Objective", "Status", "Created"],
                    interactive=False,
                    elem_id="campaigns",
                )
                which = gr.Dropdown(label="Campaign")
                tree = gr.Markdown(elem_id="lineage")
                with gr.Row():
                    open_it = gr.Button("Open this campaign", variant="primary")
                    duplicate = gr.Button("Duplicate campaign")
                    again = gr.Dropdown(label="Variant to render again", choices=[])
                    rerender = gr.Button("Render its preview again", interactive=False)
                library_note = gr.Markdown()
                gr.Markdown("### Your business")
                with gr.Row():
                    business_name = gr.Textbox(
                        label="Business name (on the end card of every new spot)",
                        max_length=limit("business_name"),
                    )
                    rename = gr.Button("Save the name")
                name_note = gr.Markdown(elem_id="name-note")
                gr.Markdown("### Your pictures")
                with gr.Row():
                    picture_file = gr.File(
                        label="A photo (JPEG, PNG, WebP) or a short clip (MP4, MOV)",
                        file_types=["image", ".mp4", ".mov", ".webm"], elem_id="picture-file",
                    )  # fmt: skip
                    add_picture = gr.Button("Add to your pictures")
                your_pictures = gr.Gallery(
                    object_fit="contain", label="Your pictures", columns=4, height="auto",
                    allow_preview=False, elem_id="pictures",
                )  # fmt: skip
                with gr.Row():
                    place = gr.Dropdown(
                        label="Place", choices=catalog.geographies, allow_custom_value=True
                    )
                    place_picture = gr.Dropdown(
                        label="Set in", choices=[(GENERATED, "")], value="",
                        allow_custom_value=True,
                    )  # fmt: skip
                    place_focus = gr.Radio(list(FOCUS_POINTS), value="centre", label="Keep")
                    set_place = gr.Button("Set this place in it")
                pictures_note = gr.Markdown(elem_id="pictures-note")

        # Wiring: each event a named endpoint. ------------------------------------------------
        spot.change(s.spot_label, inputs=spot, outputs=working_on, api_name=False)
        page.load(None, js=COUNTERS, api_name=False)
        page.load(None, js=STEPS_HISTORY, api_name=False)
        # The storyboard's, preview's and variants' actions need a spot: enabled once there is one.
        needs_spot = [reorder, redraw, set_scene, show, more, use, render, make]
        spot.change(
            lambda spot_id: [gr.Button(interactive=bool(spot_id))] * len(needs_spot),
            inputs=spot, outputs=needs_spot, **TICK,
        )  # fmt: skip
        page.load(s.welcome, outputs=who, api_name="whoami")
        page.load(s.business_name, outputs=business_name, api_name=False)
        rename.click(
            s.rename_business, inputs=business_name, outputs=[who, name_note],
            api_name="rename_business",
        )  # fmt: skip
        page.load(
            s.library_choices,
            outputs=[places, people, only_place, only_people],
            api_name="library_choices",
        )
        # A returning owner: the brief starts from the brand kit, the studio on the last spot.
        page.load(
            s.prefill, outputs=[primary, accent, url, phone, tagline, kit_note], api_name=False
        )
        gr.api(s.brand_kit, api_name="brand_kit")
        duration.change(
            s.templates, inputs=[duration, template], outputs=[thumbnails, template],
            api_name=False,
        )  # fmt: skip
        thumbnails.select(s.pick_template, inputs=duration, outputs=template, api_name=False)
        template.change(s.template_note, inputs=template, outputs=template_note, api_name=False)
        shown = [product, headline, body, offer, cta, url, phone, tagline]  # as spots.ON_SCREEN
        gr.on(
            [template.change, *(field.change for field in shown)],
            s.copy_note,
            inputs=[template, *shown],
            outputs=copy_note,
            api_name=False,
            show_progress="hidden",
            trigger_mode="always_last",
            **READ,
        )
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
                voiceover,
                music,
                music_file,
                where,
                where_focus,
                spot,  # the open spot: its product photos, where none is added
            ],
            outputs=[spot, board, scenes],
            api_name="create_spot",
        )
        gr.on(
            [voiceover.change, duration.change],
            s.voiceover_note,  # spoken, so the length is the voice's own
            inputs=[voiceover, duration],
            outputs=voiceover_note,
            api_name=False,
            show_progress="hidden",
            trigger_mode="always_last",
            **READ,
        )
        setting.change(
            s.setting_note,
            inputs=setting,
            outputs=setting_note,
            api_name="setting_words",
            show_progress="hidden",
            trigger_mode="always_last",
            **READ,
        )
        music_file.upload(lambda: UPLOADED, outputs=music, api_name=False)  # a track is chosen
        created.success(s.brief_notes, inputs=spot, outputs=template_note, api_name=False)
        created.success(s.photos_note, inputs=spot, outputs=photos_note, api_name=False)
        # Backgrounds for the new setting are drawn at once, so the storyboard's first look
        # offers the place the owner named, not only the brand colours its scenes start on.
        created.success(
            lambda: (0, BRAND_UNTIL_CHOSEN), outputs=[round_, chosen], api_name=False
        ).then(
            s.background_candidates, inputs=[spot, round_], outputs=[candidates, round_],
            api_name=False,
        )  # fmt: skip

        reorder.click(
            s.reorder_scenes,
            inputs=[spot, scene_order],
            outputs=[board, scenes],
            api_name="reorder_scenes",
        )
        board.select(s.pick_scene, outputs=redraw_scene, api_name=False)
        redraw.click(
            s.regenerate_scene,
            inputs=[spot, redraw_scene],
            outputs=[board, scenes],
            api_name="regenerate_scene",
        )
        set_scene.click(
            s.set_scene_picture,
            inputs=[spot, redraw_scene, scene_picture, scene_focus],
            outputs=[board, scenes],
            api_name="set_scene_picture",
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
        candidates.select(s.pick_candidate, inputs=round_, outputs=[seed, chosen], api_name=False)
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
        preview_tick.failure(
            halted, inputs=preview_follow, outputs=[preview_timer, preview_follow], **TICK
        )
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
        stop_preview.click(
            halted, inputs=preview_follow, outputs=[preview_timer, preview_follow], **TICK
        )
        # While a preview renders: Cancel, not Render preview; the reverse once it is over.
        preview_follow.change(
            working, inputs=preview_follow, outputs=[render, stop_preview], **TICK
        )

        spot.change(s.last_choice, inputs=spot, outputs=[places, people], **TICK)
        for chooser in (places, people):
            chooser.change(
                s.plan_variants, inputs=[spot, places, people], outputs=estimate, api_name=False
            )
        gr.api(s.plan_variants, api_name="plan_variants")
        people.change(s.copy_proposals, inputs=[spot, people], outputs=words, api_name=False)
        use_proposals.click(proposals_air, inputs=words, outputs=words, api_name=False)
        for handler in (s.copy_proposals, s.decide_copy):
            gr.api(handler, api_name=handler.__name__)
        making = make.click(
            s.make_variants,
            inputs=[spot, places, people, words],  # words last: callers without it still work
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
        variants_tick.failure(
            halted, inputs=variants_follow, outputs=[variants_timer, variants_follow], **TICK
        )
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
        stop_variants.click(
            halted, inputs=variants_follow, outputs=[variants_timer, variants_follow], **TICK
        )
        variants_follow.change(
            working, inputs=variants_follow, outputs=[make, stop_variants], **TICK
        )
        # A spot opened (a returning owner, a campaign from the Library) shows its variants,
        # and its preview if one was made; a new spot, none yet. Every change to the spot (a
        # background, an order) is a new base and changes its storyboard: the preview shown is
        # always of the spot as it stands. (Both: two spots' storyboards can be the same.)
        spot.change(
            s.variant_gallery, inputs=[spot, only_place, only_people], outputs=gallery, **TICK
        )
        gr.on(
            [spot.change, board.change],
            s.spot_preview,
            inputs=[spot, preview_follow],
            outputs=[status, video, frames, preview_follow, preview_timer],
            **TICK,
        )
        for narrow, name in ((only_place, "variant_gallery"), (only_people, False)):
            narrow.change(
                s.variant_gallery,
                inputs=[spot, only_place, only_people],
                outputs=gallery,
                api_name=name,
            )

        checks = ReviewPanel(s)
        check_all.click(checks.check_variants, inputs=spot, outputs=[flagged, fix], api_name=False)
        fix.click(
            checks.fix_these,
            inputs=spot,
            outputs=[flagged, fix_follow, fix, fix_timer],
            api_name=False,
        )
        # Not a read: its last tick reviews what was made again, which takes seconds.
        fix_timer.tick(
            checks.fix_tick, inputs=fix_follow, outputs=[flagged, fix, fix_timer],
            show_progress="hidden", api_name=False,
        ).failure(stopped, outputs=fix_timer, **TICK)  # fmt: skip
        for handler in (checks.review_variants, checks.fix_variants):
            gr.api(handler, api_name=handler.__name__)
        gr.api(checks.fix_progress, api_name="fix_progress", **READ)

        watched = VariantClips(s)
        watch.click(
            watched.watch_these,
            inputs=[spot, only_place, only_people],
            outputs=[watching, clips, clips_follow],
            api_name=False,
        ).success(following, inputs=clips_follow, outputs=clips_timer, **TICK)
        clips_timer.tick(
            watched.grid_tick,
            inputs=clips_follow,
            outputs=[watching, clips, clips_follow, clips_timer],
            **TICK,
        ).failure(stopped, outputs=clips_timer, **TICK)
        play.click(
            watched.play_pair,
            inputs=[pick_a, pick_b],
            outputs=[playing, clip_a, clip_b, pair_follow],
            api_name=False,
        ).success(following, inputs=pair_follow, outputs=pair_timer, **TICK)
        pair_timer.tick(
            watched.pair_tick,
            inputs=pair_follow,
            outputs=[playing, clip_a, clip_b, pair_follow, pair_timer],
            **TICK,
        ).failure(stopped, outputs=pair_timer, **TICK)
        gr.api(watched.play_variants, api_name="play_variants")
        gr.api(watched.clips_progress, api_name="clips_progress", **READ)

        side.click(
            s.compare,
            inputs=[pick_a, pick_b],
            outputs=[frame_a, about_a, frame_b, about_b],
            api_name="compare",
        )
        for source in (pick_a, edit_slot):
            source.change(
                s.variant_words, inputs=[pick_a, edit_slot], outputs=edit_text, api_name=False
            )
        edit.click(
            s.edit_variant_copy,
            inputs=[pick_a, edit_slot, edit_text],
            outputs=edited,
            api_name="edit_variant_copy",
        )

        chosen_variants.change(
            lambda chosen: gr.Button(interactive=bool(chosen)),
            inputs=chosen_variants, outputs=ask, **TICK,
        )  # fmt: skip
        ask.click(
            s.quote, inputs=[chosen_variants, buy_shapes, buy_destinations],
            outputs=[order, order_text], api_name=False,
        )  # fmt: skip
        order_text.change(
            s.order_actions, inputs=order, outputs=[approve, retry, withdraw, check],
            trigger_mode="always_last", **TICK,
        )  # fmt: skip
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
        # An opened spot's brief as it was sent: its words, objective, length and template.
        opened = [spot, board, scenes, library_note, order, order_text, delivered, downloads,
                  campaign, product, headline, body, offer, cta, setting, voiceover, objective,
                  url, phone, tagline, duration, template, photos_note]  # fmt: skip
        open_it.click(
            s.open_campaign,
            inputs=which,
            outputs=opened,
            api_name=False,
        ).then(
            s.variant_choices,
            inputs=spot,
            outputs=choices,
            api_name="variant_choices",
        )
        # The templates after the spot is resumed, so its template stays chosen.
        page.load(
            s.resume,
            outputs=[*opened, *choices],
            api_name=False,
        ).then(
            s.templates, inputs=[duration, template], outputs=[thumbnails, template],
            api_name="templates",
        )  # fmt: skip
        which.change(s.lineage, inputs=which, outputs=tree, api_name=False)
        which.change(s.campaign_variants, inputs=which, outputs=again, api_name=False)
        duplicate.click(
            s.duplicate_campaign, inputs=which, outputs=library_note, api_name=False
        ).then(s.campaigns, outputs=[table, which], api_name=False)
        again.change(
            lambda variant: gr.Button(interactive=variant is not None),
            inputs=again, outputs=rerender, **TICK,
        )  # fmt: skip
        rerender.click(s.rerender, inputs=again, outputs=library_note, api_name=False)
        page.load(
            s.your_pictures,
            outputs=[your_pictures, where, place_picture, scene_picture],
            api_name="pictures",
        )
        add_picture.click(
            s.add_picture,
            inputs=picture_file,
            outputs=[your_pictures, where, place_picture, scene_picture, pictures_note],
            api_name="add_picture",
        )
        set_place.click(
            s.set_place_picture,
            inputs=[place, place_picture, place_focus],
            outputs=pictures_note,
            api_name="set_place_picture",
        )
        # Inputs whose choices depend on the business are typed endpoints of their own (a
        # component would refuse a value it was not sent with).
        for handler in (s.quote, s.lineage, s.duplicate_campaign, s.open_campaign, s.rerender):
            gr.api(handler, api_name=handler.__name__)
    page.queue(default_concurrency_limit=WORKERS, max_size=QUEUE_MAX)
    return page
