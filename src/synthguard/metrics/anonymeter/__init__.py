"""The GDPR trio after anonymeter: singling out, linkability, inference, and their summary.

Modules: :mod:`.singling_out`, :mod:`.linkability`, :mod:`.inference`, :mod:`.summary`.
"""
