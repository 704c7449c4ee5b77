import gc
import os

from django.core.wsgi import get_wsgi_application

# Production unless told: a server started bare must not run in DEBUG with a known secret;
# a laptop sets DJANGO_SETTINGS_MODULE=parity.settings.local (the Makefile does).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parity.settings.production")
application = get_wsgi_application()

# Everything loaded so far lives as long as the process: leave it out of the collector's passes,
# which a page building thousands of objects (a gaps page, a heatmap) otherwise pays for every
# time the oldest generation is collected.
gc.freeze()
