"""Design bundles: reading them safely, their references and elements, the manifest, the store."""
