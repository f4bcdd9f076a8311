"""Where users run dra-migrate: repository layouts (kustomize, Helm, .gitignore), pull requests, hooks."""
