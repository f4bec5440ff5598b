"""The backends a VLM's rule asks (:mod:`hf_bgbench.models.vlm.backend`): in-process
transformers (:mod:`.hf_transformers`), any OpenAI-compatible endpoint (:mod:`.openai_api`)
and vLLM's offline engine (:mod:`.vllm_engine`). Each is imported at its first use."""
