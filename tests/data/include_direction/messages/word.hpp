// A vocabulary header that reaches up into an actor: the check must refuse it.
#pragma once
#include "podref/actors/manager.hpp"
