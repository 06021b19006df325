"""The answer shape of the design tools: untrusted data that is never approval.

bee_design_list, bee_design_slice and bee_design_verify answer ``{schemaVersion, ok, data, trusted: false,
acceptance: false}``; bee_visual_report answers its assessment (decision, findings, limitations) in place of
``data``. ``ok`` is always true in a result: a failed call is ``isError`` with the contracts' error envelope
instead (and no structuredContent), the one failure shape every client reads.
"""

from typing import Final

#: Version of the design tools' answer shape.
SCHEMA_VERSION: Final = 1
