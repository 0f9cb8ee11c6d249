"""The "torch.sdpa" peer: what a PyTorch user calls instead of writing attention out.

For each attention workload, the same computation as its spec, written the
way one would write it with PyTorch's fused CPU attention,
`torch.nn.functional.scaled_dot_product_attention` (its flash kernel on the
CPU): the spec's parameters in, the spec's outputs out, every tensor as the
peers harness passes it (float32, contiguous). peers.py checks each form's
outputs against numpy's running the spec itself, as it checks every peer,
so a form that differs from its spec fails as "wrong result", never silently.

FORMS maps a spec's entry name to its form. A program whose entry is not
here has no fused formulation: the peer reports it as not applicable.
"""
import math


def _attention(F, torch):
    def m5_attention(Q, K, V):
        return F.scaled_dot_product_attention(Q, K, V)

    def m6_causal_attention(Q, K, V):
        return F.scaled_dot_product_attention(Q, K, V, is_causal=True)

    def m7_gqa_decode(q, K, V):
        # Grouped heads: the 32 query heads of one decode step as 8 groups of
        # 4 queries, each group attending to its own kv head.
        hq, d = q.shape
        hkv = K.shape[0]
        out = F.scaled_dot_product_attention(q.reshape(hkv, hq // hkv, d), K, V)
        return out.reshape(hq, d)

    def m8_mla_decode(q_lat, q_pe, c_kv, k_pe):
        # Absorbed MLA: one score product over the concatenated (latent,
        # rotary) features, the latent cache as the values.
        scale = (0.1 * math.log(40.0) + 1.0) ** 2 / math.sqrt(192.0)
        q = torch.cat([q_lat, q_pe], dim=-1)
        k = torch.cat([c_kv, k_pe], dim=-1)
        return F.scaled_dot_product_attention(q, k, c_kv, scale=scale)

    def m9_qknorm_attention(Q, K, V, gq, gk):
        d = Q.shape[-1]
        q = F.rms_norm(Q, (d,), gq, eps=1e-6)
        k = F.rms_norm(K, (d,), gk, eps=1e-6)
        return F.scaled_dot_product_attention(q, k, V)

    return {f.__name__: f for f in (m5_attention, m6_causal_attention, m7_gqa_decode, m8_mla_decode,
                                    m9_qknorm_attention)}


def forms(torch):
    """{entry name: callable on torch tensors} for every workload with a fused form."""
    import torch.nn.functional as F
    return _attention(F, torch)
