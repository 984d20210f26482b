package tokens

import "errors"

// ErrUnknownEncoding is returned (wrapped) by [ForEncoding] for a name that is
// not one of [Encodings].
var ErrUnknownEncoding = errors.New("unknown encoding")

// ErrUnknownModel is returned (wrapped) by [LookupModel] for a provider and
// model that match none of [ForModel]'s rules.
var ErrUnknownModel = errors.New("unknown model")

// errBadVocab reports a corrupt embedded vocabulary; it cannot happen with the
// assets this package is built with, and the tests load every encoding.
var errBadVocab = errors.New("malformed vocabulary")
