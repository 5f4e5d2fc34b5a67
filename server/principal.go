package server

import "context"

type principalKey struct{}

// ContextWithPrincipal returns a context carrying the authenticated
// principal (for example a bearer token's subject). State issued under a
// principal is refused for any other principal, and for none.
func ContextWithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// PrincipalFromContext returns the principal set by ContextWithPrincipal, or
// "" when the request is anonymous.
func PrincipalFromContext(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}
