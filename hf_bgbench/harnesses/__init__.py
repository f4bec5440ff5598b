"""bgbench's benchmarks where VLM researchers already work: lmms-eval tasks
(:mod:`.lmms_eval_tasks`, the plugin :mod:`hf_bgbench.lmms_eval_plugin`) and VLMEvalKit
datasets (:mod:`.vlmevalkit`), asked and read by bgbench's own rules (:mod:`.asking`)."""
