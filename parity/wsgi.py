import os

from django.core.wsgi import get_wsgi_application

# Production unless told: a server started bare must not run in DEBUG with a known secret;
# a laptop sets DJANGO_SETTINGS_MODULE=parity.settings.local (the Makefile does).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parity.settings.production")
application = get_wsgi_application()
