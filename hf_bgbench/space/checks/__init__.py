"""What a visitor may ask of the Space, checked before anything loads: a model id
(:mod:`.model_id`), the model's weights on the Hub (:mod:`.model_weights`), a dataset from
the operator's allow-list (:mod:`.allowlist`) and the other picks of a job
(:mod:`.inputs`); a refusal, and any other error, told in plain words
(:mod:`.messages`). No Gradio here."""
