"""Where the HTTP server binds: flags, then $PORT / $HOST, then a default that says why it was chosen."""

from __future__ import annotations

import pytest

from agent.errors import ConfigError
from bots.serving import bind_address, in_container
from bots.settings import DeploySettings


def test_flags_win_over_the_environment() -> None:
    bind = bind_address("10.0.0.5", 8080, DeploySettings.from_env({"PORT": "5000", "HOST": "0.0.0.0"}).server)
    assert (bind.host, bind.port, bind.why) == ("10.0.0.5", 8080, "flags")


def test_port_and_host_come_from_the_environment() -> None:
    bind = bind_address(None, None, DeploySettings.from_env({"PORT": "5000", "HOST": "::"}).server)
    assert (bind.host, bind.port) == ("::", 5000) and bind.why == "port from $PORT; host from $HOST"


def test_without_host_the_default_depends_on_being_in_a_container() -> None:
    bind = bind_address(None, None, DeploySettings.from_env({}).server)
    assert bind.port == 3000
    if in_container():
        assert bind.host == "0.0.0.0" and bind.why == "in a container: all interfaces"
    else:
        assert bind.host == "127.0.0.1" and bind.why == "not in a container: loopback only"


def test_a_bad_port_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="PORT: input should be a valid integer"):
        bind_address(None, None, DeploySettings.from_env({"PORT": "web"}).server)
