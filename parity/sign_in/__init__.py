"""Sign-in through GitHub, GitLab and OpenID Connect providers (django-allauth), and the project
roles their groups grant (docs/sign-in.md). Installed only when a provider is configured
(parity/settings/sign_in.py); the login page is Django's form with a button per provider."""
