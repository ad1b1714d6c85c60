"""An example synthguard plugin: the privacy test ``rare_qi_echo`` (see :mod:`.rare_qi_echo`)."""
