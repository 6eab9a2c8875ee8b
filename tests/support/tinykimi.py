"""The CPU-sized overrides of ``bench/gpu/kimi.py``'s Kimi-K2.5-shaped checkpoint, for the tests
that build one (``kimi.build(out, text_over=TEXT, vision_over=VISION)``)."""

# small enough for a CPU: MLA, routed + shared experts, a dense first layer
TEXT = dict(hidden_size=64, intermediate_size=128, moe_intermediate_size=32, num_hidden_layers=4,
            first_k_dense_replace=1, num_attention_heads=2, num_key_value_heads=2,
            q_lora_rank=32, kv_lora_rank=32, qk_rope_head_dim=16, qk_nope_head_dim=16,
            v_head_dim=16, n_routed_experts=4, num_experts_per_tok=2)  # fmt: skip
VISION = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1)
