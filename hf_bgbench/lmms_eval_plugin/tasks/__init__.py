"""The plugin's task folders (YAML files lmms-eval reads; written from bgbench's benchmark
specs by ``bgbench export lmms-eval``, checked equal to them by the tests)."""
