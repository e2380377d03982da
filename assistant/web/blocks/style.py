"""The page's styles: one column under 900 px, touch-sized controls on phones, tables that
scroll inside themselves, the panel's memory chart (`assistant.web.charts.plan` class names), and
the toasts' titles in the page's language (Gradio writes them in English; the page's `lang`
attribute, set with the interface language, picks ours)."""

from __future__ import annotations

from assistant.web.ui_strings import ui_text
from tools.languages import LANGUAGES

__all__ = ["CSS", "NARROW_PX", "PINNED"]

NARROW_PX = 900  # under this width the page is one column: chat, job panel, tables
# Columns kept in view while a table scrolls sideways: table id -> widths (px) of its first
# columns (rank and instance, or the instance alone). Gradio 6's table ignores its own
# `pinned_columns`, so the cells are made sticky here.
PINNED: dict[str, tuple[int, ...]] = {
    "ranked": (48, 250),
    "ranked-more": (48, 250),
    "excluded": (260,),
    "catalog": (270,),
    "catalog-more": (270,),
}
NARROW_PINNED_PX = 150  # the instance column on a phone (its text wraps)

CSS = f"""
.gradio-container {{max-width: 1480px !important; margin: auto !important}}
#header {{align-items: flex-end; gap: 8px 16px}}
#title h1 {{margin: 0 0 2px; font-size: 1.6rem}}
#tagline p {{margin: 0; opacity: .85}}
#languages {{gap: 8px}}
#privacy {{font-size: .85rem; opacity: .75}}
#price-age-row {{align-items: center; gap: 4px 12px}}
#price-age p {{margin: 0; font-size: .9rem}}
#header-refresh {{flex: 0 0 auto; align-self: center}}
#cost-caption p, #ranked-count p, #cat-count p, #catalog-note p {{font-size: .85rem; margin: 0}}
/* Wide content scrolls inside its own box: its width never widens the page. */
#ranked, #ranked-more, #excluded, #catalog, #catalog-more, #est-parts, #launch-yaml,
#cost-chart, #est-chart {{contain: inline-size; width: 100%; max-width: 100%}}
#ranked .table-wrap, #ranked-more .table-wrap, #excluded .table-wrap, #catalog .table-wrap,
#catalog-more .table-wrap, #est-parts .table-wrap {{overflow-x: auto}}
.plan-chart {{margin: 0; font-size: 13px; line-height: 1.35}}
.plan-chart .pc-title {{font-weight: 600; font-size: 15px; margin-bottom: 6px}}
.plan-chart .pc-sub {{margin-bottom: 3px}}
.plan-chart .pc-stack {{display: flex; height: 10px; border-radius: 2px; overflow: hidden}}
.plan-chart .pc-legend {{display: flex; flex-wrap: wrap; gap: 2px 14px; list-style: none;
  padding: 0; margin: 4px 0 10px; font-size: 12px}}
.plan-chart .pc-legend li {{margin: 0}}
.plan-chart .pc-legend i {{display: inline-block; width: 10px; height: 10px; margin-right: 4px;
  vertical-align: -1px}}
.plan-chart .pc-rows {{list-style: none; padding: 0; margin: 0}}
.plan-chart .pc-row {{margin: 0 0 8px}}
.plan-chart .pc-first .pc-label {{font-weight: 600}}
.plan-chart .pc-label {{display: flex; flex-wrap: wrap; justify-content: space-between;
  gap: 0 10px}}
.plan-chart .pc-fig {{white-space: nowrap; font-variant-numeric: tabular-nums}}
.plan-chart .pc-track {{display: flex; height: 14px; border: 1.5px solid currentColor;
  border-radius: 3px; box-sizing: border-box; padding: 1.5px}}
.plan-chart .pc-need {{background: #2e7d32; height: 100%}}
.plan-chart .pc-margin {{background: #81c784; height: 100%}}
.plan-chart .pc-axis {{position: relative; height: 16px; font-size: 11px; opacity: .7;
  margin-top: 2px}}
.plan-chart .pc-axis span {{position: absolute; transform: translateX(-50%);
  white-space: nowrap}}
.plan-chart .pc-axis .pc-start {{transform: none}}
.plan-chart .pc-axis .pc-end {{transform: translateX(-100%)}}
.plan-chart .chart-note {{font-size: 12px; opacity: .8; margin: 6px 0 0}}
.memory-chart text {{user-select: none}}
@media (max-width: {NARROW_PX}px) {{
  .gradio-container {{padding-left: 8px !important; padding-right: 8px !important}}
  #header, #advisor-row {{flex-direction: column !important; flex-wrap: nowrap !important}}
  #header > *, #advisor-row > * {{min-width: 100% !important; width: 100% !important}}
  .input-row {{flex-wrap: wrap !important}}
  .input-row > * {{min-width: calc(50% - 8px) !important; flex: 1 1 calc(50% - 8px) !important}}
  #chat {{height: min(62vh, 560px) !important}}
  /* The first screen's welcome and examples whole, from their first line: Gradio scrolls a
     chat to its end, which started the welcome mid-sentence on a phone. */
  #chat:has(.placeholder-content) {{height: auto !important; max-height: none !important}}
  #chat .bubble-wrap:has(> .placeholder-content) {{height: auto !important;
    max-height: none !important; overflow-y: visible !important}}
  button, input, textarea, [role="combobox"], [role="tab"] {{min-height: 44px}}
}}
/* Gradio hides its "Use via API or MCP" link under 640 px; the README points phones to it too.
   Outside a media query: Gradio keeps plain rules as written (the footer is outside .contain). */
.show-api, .show-api-divider {{display: flex !important}}
"""


def _pinned() -> str:
    """Sticky first columns, and on a phone a narrower instance column."""
    rules, narrow = [], []
    for table, widths in PINNED.items():
        left = 0
        for index, width in enumerate(widths, start=1):
            cells = (
                f"#{table} .virtual-row > .body-cell:nth-child({index}), "
                f"#{table} tr > th:nth-child({index})"
            )
            rules.append(
                f"{cells} {{position: sticky !important; left: {left}px; z-index: 2;"
                " background: var(--background-fill-primary)}"
            )
            left += width
        last = (
            f"#{table} .virtual-row > .body-cell:nth-child({len(widths)}), "
            f"#{table} tr > th:nth-child({len(widths)})"
        )
        px = f"{NARROW_PINNED_PX}px !important"
        narrow.append(f"{last} {{width: {px}; min-width: {px}; max-width: {px}}}")
    return (
        "\n".join(rules) + f"\n@media (max-width: {NARROW_PX}px) {{\n" + "\n".join(narrow) + "\n}"
    )


def _toast_titles() -> str:
    """One rule per language and toast kind replacing Gradio's English title."""
    kinds = {
        "info": "toast_info",
        "warning": "toast_warning",
        "error": "toast_error",
        "success": "toast_info",
    }
    rules = [
        ".toast-title {font-size: 0 !important}",
        ".toast-title::before {font-size: var(--text-md)}",
    ]
    for lang in ("", *LANGUAGES):  # English first, for a page in none of the six
        scope = f"html:lang({lang}) " if lang else ""
        for kind, key in kinds.items():
            title = ui_text(lang or "en", key).replace("'", "\\'")
            rules.append(f"{scope}.toast-title.{kind}::before {{content: '{title}'}}")
    return "\n".join(rules)


CSS += _pinned() + "\n" + _toast_titles()
