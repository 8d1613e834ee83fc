-- Serialises claims: taken first in the READ COMMITTED claim transaction.
SELECT name FROM {{table}}_locks WHERE name = 'claim' FOR UPDATE
