// A kit test that reaches past the public headers: the check must refuse it.
#include <caf/actor.hpp>

#include "podref/runtime/api_server.hpp"
