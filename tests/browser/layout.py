"""What the browser tests measure of a page's layout."""


def page_overflow(page) -> int:
    """How many pixels the page scrolls sideways, once it has settled: its requests done and
    the layout they change redrawn (on a loaded machine, a check right after the content showed
    caught a layout still in motion)."""
    page.wait_for_load_state("networkidle")
    return page.evaluate(
        """() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() =>
            done(document.documentElement.scrollWidth - document.documentElement.clientWidth))))"""
    )
