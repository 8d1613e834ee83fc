SELECT version FROM {{table}}_migrations
