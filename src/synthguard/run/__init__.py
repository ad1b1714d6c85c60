"""Running metrics: presets and configuration, the runner, the verdict."""
