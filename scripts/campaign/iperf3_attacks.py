"""The campaign's attacks on the iperf3 server and client (issue 33 items 1, 2, 4, 5, 6, 9). Mixed into campaign.Campaign; each attack
adds its row with self.row(...), as fleet.py's do."""


class Iperf3Attacks:
    def iperf3_attacks(self):
        attacks = []
        for attack in attacks:
            try:
                attack()
            except Exception as e:  # one attack's failure is its row, not the campaign's end
                self.row(attack.__name__, "-", False, (None, None), (None, None),
                         f"attack failed: {e!r}", False)
