// An actor header that includes the vocabulary: allowed.
#pragma once
#include "podref/messages/word.hpp"
