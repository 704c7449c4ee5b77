"""Pure libraries: strings and plain data in, plain data out; no Django, no models (the
``pure-exemption-files`` contract of .importlinter). Exemption patterns (``globs``), exemption
lists kept elsewhere (``exemption_files``) and a backend's reproduce command (``reproduce``)."""
