"""The root group's click context settings, which every command below it inherits: shared by the group and by the
commands `bee` starts directly (:data:`bee_cli.main.DIRECT`), so both print help the same way."""

CONTEXT_SETTINGS: dict[str, object] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
