// Everything a user of RLX needs.
#pragma once
#include "rlx/dtype.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/ops.h"
#include "rlx/session.h"
#include "rlx/shape.h"
#include "rlx/tensor.h"
