"""A match record printed hand by hand, with both hands visible (``arena show``)."""

from __future__ import annotations

from typing import Any

from gin_arena_core.rules import RulesConfig, apply_action, deal_hand, new_game, parse_action
from gin_arena_core.rules.cards import format_cards, sorted_for_display


def show(record: list[dict[str, Any]]) -> str:
    """The match, readably, hand by hand with both hands visible."""
    head = record[0]
    rules = RulesConfig.from_spec(head["rules"])
    names = head.get("names", ["seat 0", "seat 1"])
    out = [f"match {head.get('match_id')}: {names[0]} (seat 0) vs {names[1]} (seat 1), "
           f"rules {rules.preset}, seed {head.get('seed')}"]
    game = new_game(rules, int(head["first_dealer"]))
    for item in record[1:]:
        kind = item["type"]
        if kind == "deal":
            game = deal_hand(game, item["deck"], item.get("knock_card"))
            hand = game.hand
            assert hand is not None
            out.append("")
            out.append(f"hand {game.hand_number}: {names[hand.dealer]} deals; "
                       f"knock limit {hand.knock_limit}"
                       + (f"; upcard {hand.upcard}" if hand.upcard is not None else ""))
            for s in (0, 1):
                out.append(f"  {names[s]:>12}: {format_cards(sorted_for_display(hand.hand(s)))}")
        elif kind == "action":
            action = parse_action(item["action"], runs_only=rules.runs_only)
            hand = game.hand
            assert hand is not None
            seat = int(item["seat"])
            drawn = ""
            game = apply_action(game, seat, action)
            new = game.hand
            assert new is not None
            if item["action"] == "draw_stock":
                drawn = f" -> {new.deck[new.stock_pos - 1]}"
            note = f"  ({item['defaulted']})" if item.get("defaulted") else ""
            out.append(f"    {names[seat]:>12}: {item['action']}{drawn}"
                       f"  [{item.get('ms', 0):.1f} ms]{note}")
        elif kind == "rejected" and item.get("action") is None \
                and str(item.get("error", "")).startswith("bot_error:"):
            pass  # its "bot_error" line says it
        elif kind == "rejected":
            out.append(f"    {names[item['seat']]:>12}: REFUSED {item['action']}: {item['error']}")
        elif kind == "bot_error":
            out.append(f"    {names[item['seat']]:>12}: BOT ERROR {item['error']}")
        elif kind == "hand_result":
            r = game.results[-1]
            if r.winner is None:
                out.append(f"  result: {r.kind} (void)")
            else:
                out.append(f"  result: {r.kind}, {names[r.winner]} scores {r.points}; "
                           f"deadwood {r.deadwood[0]} / {r.deadwood[1]}; "
                           f"scores {item['scores'][0]}-{item['scores'][1]}")
                for s in (0, 1):
                    melds = " | ".join(str(m) for m in r.melds[s])
                    out.append(f"    {names[s]:>12}: [{melds}] deadwood "
                               f"{format_cards(r.deadwood_cards[s])}")
                if r.layoffs:
                    out.append("    layoffs: " + ", ".join(f"{c}>{i}" for c, i in r.layoffs))
        elif kind == "end":
            winner = item["winner"]
            who = names[winner] if winner is not None else "nobody"
            out.append("")
            out.append(f"end: {item['termination']}; winner {who}; scores {item['scores']}"
                       + (f"; blamed {names[item['blamed']]}" if item.get("blamed") is not None
                          else "") + (f"; {item['detail']}" if item.get("detail") else ""))
    return "\n".join(out)


__all__ = ["show"]
