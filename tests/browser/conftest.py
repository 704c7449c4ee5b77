"""Browser tests: Playwright drives Debian's Chromium (``/usr/bin/chromium``, headless) against a
live server holding three days of the demo project, uploaded through the API by ``load_demo``.

Loading takes seconds, so the data and the server live for the whole module, outside
pytest-django's per-test transactions (its ``live_server`` flushes the database after every
test); the module's teardown flushes it so later tests start empty. Every request the page makes
to a host other than 127.0.0.1 or localhost is aborted and fails the test, as does any console
error, a page answered without a Content-Security-Policy, and anything the policy refused.
Each test leaves a full-page screenshot in ``screenshots/<test>.png`` at the repo root.
"""

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.management import call_command
from django.db import connections
from django.test import Client, override_settings
from django.test.testcases import LiveServerThread

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "screenshots"
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
# The page fixture's widths: name one with indirect parametrization (``page`` -> "narrow").
VIEWPORTS = {"desktop": {"width": 1400, "height": 900}, "narrow": {"width": 400, "height": 860}}
DEMO_DAYS = 3
MAINTAINER = ("maintainer", "a-test-password-1")

no_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason=f"{CHROMIUM} is absent: install Debian's chromium (apt-get install chromium); "
    ".ci/run does",
)


@dataclass
class Site:
    url: str
    maintainer_session: str  # a sessionid cookie of a logged-in maintainer


@pytest.fixture(scope="module")
def site(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Site]:
    """A live server on 127.0.0.1 with the demo project loaded through the upload API, its
    ``SITE_URL`` the address it serves (as ``make demo`` sets it from HOST and PORT)."""
    media = tmp_path_factory.mktemp("media")
    server = LiveServerThread("127.0.0.1", StaticFilesHandler, port=0)
    server.daemon = True
    server.start()
    server.is_ready.wait()
    if server.error:
        raise server.error
    url = f"http://127.0.0.1:{server.port}"
    try:
        with django_db_blocker.unblock(), override_settings(MEDIA_ROOT=media, SITE_URL=url):
            call_command("load_demo", "--days", str(DEMO_DAYS), stdout=io.StringIO())
            get_user_model().objects.create_superuser(MAINTAINER[0], password=MAINTAINER[1])
            client = Client()
            client.login(username=MAINTAINER[0], password=MAINTAINER[1])
            yield Site(url=url, maintainer_session=client.cookies["sessionid"].value)
    finally:
        server.terminate()
        with django_db_blocker.unblock():
            call_command("flush", interactive=False, verbosity=0)


@pytest.fixture(scope="module")
def chromium(site):
    # Set up after the site, so closed before it: Chromium's open keep-alive connections
    # would otherwise hold the server's database connections past the module.
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop in this thread; the ORM calls the tests make
    # in it (expected numbers, a login session) are plain synchronous calls.
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()
        # While Playwright's loop runs, Django keys its connections by that context: the
        # tests' own connection is this one, and nothing else would ever close it.
        connections.close_all()


@dataclass
class Watch:
    """What a page did that a test must not let pass."""

    outside: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    template_markup: list[str] = field(default_factory=list)
    csp_violations: list[str] = field(default_factory=list)
    without_csp: list[str] = field(default_factory=list)  # pages answered without the policy

    def console(self, message) -> None:
        if _CSP_VIOLATION.search(message.text):
            self.csp_violations.append(message.text)
        elif message.type == "error":
            self.console_errors.append(message.text)


# What Chromium logs when the Content-Security-Policy refuses something ("Refused to load…",
# "Applying inline style violates…"), and what the page's listener logs for each
# securitypolicyviolation event (``_REPORT_VIOLATIONS``).
_CSP_VIOLATION = re.compile(r"Content Security Policy|^Refused to |^CSP violation")
_REPORT_VIOLATIONS = """document.addEventListener("securitypolicyviolation", (e) =>
  console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`
    + ` at ${e.sourceFile}:${e.lineNumber}`));"""


_SCRIPTS_AND_STYLES = re.compile(r"<(script|style)\b.*?</\1>", re.DOTALL | re.IGNORECASE)
_TEMPLATE_MARKUP = re.compile(r".{0,40}(?:\{#|\{%|\{\{|#\}).{0,40}")


def template_markup(url: str, html: str) -> list[str]:
    """Django template syntax left in a page's HTML (outside scripts and styles): a comment
    that spans lines, a tag that did not parse. Readers would see it as text."""
    text = _SCRIPTS_AND_STYLES.sub("", html)
    return [f"{url}: {match.group(0).strip()}" for match in _TEMPLATE_MARKUP.finditer(text)]


@pytest.fixture
def page(chromium, site, request):
    """A fresh browser context on the site, at a desktop width (or ``VIEWPORTS[request.param]``).
    Afterwards: a full-page screenshot, and failure if a request left 127.0.0.1, the console
    logged an error, or template source reached a page's HTML or its visible text."""
    viewport = VIEWPORTS[getattr(request, "param", "desktop")]
    context = chromium.new_context(base_url=site.url, viewport=viewport)
    watch = Watch()

    def guard(route) -> None:
        if urlsplit(route.request.url).hostname not in LOCAL_HOSTS:
            watch.outside.append(route.request.url)
            route.abort()
        elif route.request.resource_type == "document":
            response = route.fetch(max_redirects=0)  # the browser follows redirects itself
            watch.template_markup += template_markup(route.request.url, response.text())
            if "content-security-policy" not in response.headers:
                watch.without_csp.append(route.request.url)
            route.fulfill(response=response)
        else:
            route.continue_()

    context.route("**/*", guard)
    context.add_init_script(_REPORT_VIOLATIONS)
    page = context.new_page()
    page.on("console", watch.console)
    page.on("pageerror", lambda e: watch.console_errors.append(str(e)))
    page.watch = watch
    yield page
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{request.node.name}.png", full_page=True)
    if page.url.startswith(site.url):
        shown = page.locator("body").inner_text()
        watch.template_markup += template_markup(f"{page.url} (shown)", shown)
    context.close()
    assert watch.template_markup == [], f"template source shown to readers: {watch.template_markup}"
    assert watch.outside == [], f"requests left 127.0.0.1: {watch.outside}"
    assert watch.console_errors == [], f"console errors: {watch.console_errors}"
    assert watch.without_csp == [], f"pages without a Content-Security-Policy: {watch.without_csp}"
    assert watch.csp_violations == [], f"the CSP refused: {watch.csp_violations}"


def log_in(page, site: Site) -> None:
    """Give the browser a maintainer's session, as Django's admin login would (its login page
    is not the dashboard's and is not under test here)."""
    cookie = {"name": "sessionid", "value": site.maintainer_session, "url": site.url}
    page.context.add_cookies([cookie])
